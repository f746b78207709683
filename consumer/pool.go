package consumer

import (
	"sync"
	"sync/atomic"
)

// pool runs message sequences on at most size long-lived goroutines, started
// as they are first needed: no goroutine per message, and a handler's stack,
// once grown, is reused. errgroup.Group with SetLimit would start a
// goroutine per message: BenchmarkErrgroupGoDeepStack (a handler using
// 32 KiB of stack) takes ~6.4 µs a message where
// BenchmarkPoolSubmitDeepStack takes ~0.87 µs, and allocates.
//
// Sequences wait in a queue (the receive-ahead buffer) until a worker is
// free; the queue holds every sequence the intake lets the consumer hold,
// so submit never blocks. The receive loops call submit, concurrently;
// close comes after the last submit.
type pool struct {
	size    int32
	handle  func(*sequence)
	work    chan *sequence
	workers atomic.Int32 // started so far
	idle    atomic.Int32 // waiting for work
	wg      sync.WaitGroup
}

// newPool returns a pool of size workers whose queue holds up to queue
// sequences.
func newPool(size, queue int, handle func(*sequence)) *pool {
	return &pool{size: int32(size), handle: handle, work: make(chan *sequence, queue)}
}

// submit queues s for a worker, starting one if none is idle and fewer than
// size run.
func (p *pool) submit(s *sequence) {
	if p.idle.Load() == 0 && p.workers.Load() < p.size {
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
	for {
		p.idle.Add(1)
		s, ok := <-p.work
		p.idle.Add(-1)
		if !ok {
			return
		}
		p.handle(s)
	}
}

// waiting takes a sequence still queued, if any, without waiting.
func (p *pool) waiting() (*sequence, bool) {
	select {
	case s, ok := <-p.work:
		return s, ok
	default:
		return nil, false
	}
}

// close tells the workers that no more work comes; wait returns when they
// have finished what they hold.
func (p *pool) close() { close(p.work) }
func (p *pool) wait()  { p.wg.Wait() }
