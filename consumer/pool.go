package consumer

import (
	"sync"
	"sync/atomic"
)

// pool runs message sequences on at most size long-lived goroutines, started as
// they are first needed: no goroutine per message, and a handler's stack,
// once grown, is reused. errgroup.Group with SetLimit would start a
// goroutine per message: BenchmarkErrgroupGoDeepStack (a handler using
// 32 KiB of stack) takes ~6.4 µs a message where BenchmarkPoolSubmitDeepStack
// takes ~0.87 µs, and allocates. The receive loops call submit, concurrently; close
// comes after the last submit.
type pool struct {
	size    int32
	handle  func(*sequence)
	work    chan *sequence
	workers atomic.Int32 // started so far
	wg      sync.WaitGroup
}

func newPool(size int, handle func(*sequence)) *pool {
	return &pool{size: int32(size), handle: handle, work: make(chan *sequence)}
}

// submit hands s to an idle worker, starting one if none is idle and
// fewer than size run. The caller holds a handler slot for the sequence, so
// with all size workers started one of them is, or is about to be, idle.
func (p *pool) submit(s *sequence) {
	if p.workers.Load() < p.size {
		select {
		case p.work <- s:
			return
		default:
		}
		if p.workers.Add(1) <= p.size {
			p.wg.Add(1)
			go p.worker(s)
			return
		}
		p.workers.Add(-1)
	}
	p.work <- s
}

func (p *pool) worker(first *sequence) {
	defer p.wg.Done()
	p.handle(first)
	for s := range p.work {
		p.handle(s)
	}
}

// close tells the workers that no more work comes; wait returns when they
// have finished what they hold.
func (p *pool) close() { close(p.work) }
func (p *pool) wait()  { p.wg.Wait() }
