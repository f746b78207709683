package consumer

import (
	"sync"
	"sync/atomic"
)

// pool runs message runs on at most size long-lived goroutines, started as
// they are first needed: no goroutine per message, and a handler's stack,
// once grown, is reused. The receive loops call submit, concurrently; close
// comes after the last submit.
type pool struct {
	size    int32
	handle  func(*run)
	work    chan *run
	workers atomic.Int32 // started so far
	wg      sync.WaitGroup
}

func newPool(size int, handle func(*run)) *pool {
	return &pool{size: int32(size), handle: handle, work: make(chan *run)}
}

// submit hands run to an idle worker, starting one if none is idle and
// fewer than size run. The caller holds a handler slot for the run, so
// with all size workers started one of them is, or is about to be, idle.
func (p *pool) submit(run *run) {
	if p.workers.Load() < p.size {
		select {
		case p.work <- run:
			return
		default:
		}
		if p.workers.Add(1) <= p.size {
			p.wg.Add(1)
			go p.worker(run)
			return
		}
		p.workers.Add(-1)
	}
	p.work <- run
}

func (p *pool) worker(first *run) {
	defer p.wg.Done()
	p.handle(first)
	for run := range p.work {
		p.handle(run)
	}
}

// close tells the workers that no more work comes; wait returns when they
// have finished what they hold.
func (p *pool) close() { close(p.work) }
func (p *pool) wait()  { p.wg.Wait() }
