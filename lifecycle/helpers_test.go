package lifecycle

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// blockingLoop runs until its context is cancelled and returns ctx.Err().
type blockingLoop struct {
	started chan struct{}
}

func newBlockingLoop() *blockingLoop { return &blockingLoop{started: make(chan struct{})} }

func (b *blockingLoop) Run(ctx context.Context) error {
	close(b.started)
	<-ctx.Done()
	return ctx.Err()
}

// drainLoop is a Shutdowner in the net/http.Server style: Shutdown stops
// intake, and Run finishes its in-flight work in drain, then returns nil.
type drainLoop struct {
	drain       time.Duration // in-flight work left when Shutdown is called
	ignore      bool          // Shutdown returns nil at once and Run ignores it
	shutdownErr error         // returned by Shutdown after the drain

	once        sync.Once
	stopping    chan struct{} // closed by Shutdown
	returned    chan struct{} // closed when Run returns
	ctxErrAtEnd atomic.Value  // Run's ctx.Err() when Run returned (error or nil)
	running     atomic.Bool
	hadDeadline atomic.Bool // Shutdown's ctx had a deadline
}

func newDrainLoop(drain time.Duration) *drainLoop {
	return &drainLoop{drain: drain, stopping: make(chan struct{}), returned: make(chan struct{})}
}

func (d *drainLoop) Run(ctx context.Context) (err error) {
	d.running.Store(true)
	defer func() {
		d.running.Store(false)
		d.ctxErrAtEnd.Store(errBox{ctx.Err()})
		close(d.returned)
	}()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-d.stopping:
	}
	if d.ignore {
		<-ctx.Done()
		return ctx.Err()
	}
	select {
	case <-time.After(d.drain): // the in-flight work finishing
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *drainLoop) Shutdown(ctx context.Context) error {
	_, ok := ctx.Deadline()
	d.hadDeadline.Store(ok)
	d.once.Do(func() { close(d.stopping) })
	if d.ignore {
		return nil
	}
	select {
	case <-d.returned:
		return d.shutdownErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *drainLoop) Ready() error {
	if !d.running.Load() {
		return errors.New("not running")
	}
	return nil
}

// ctxErr returns Run's ctx.Err() at the moment Run returned.
func (d *drainLoop) ctxErr() error {
	b, _ := d.ctxErrAtEnd.Load().(errBox)
	return b.err
}

type errBox struct{ err error }
