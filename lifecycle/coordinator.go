package lifecycle

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"time"
)

// ShutdownCoordinator turns SIGTERM/SIGINT (or a call to Trigger) into one
// process-wide shutdown: it cancels [ShutdownCoordinator.Context], closes
// [ShutdownCoordinator.Done], runs the callbacks given to
// [ShutdownCoordinator.Register], and stops every [LoopGroup] attached to
// it. A second signal while shutdown is under way exits the process at once
// (see CoordinatorConfig.Exit).
//
// Create one with [NewShutdownCoordinator]; the zero value also works and
// uses the defaults of a zero [CoordinatorConfig]. Once Install was called or
// shutdown has begun, call Stop (typically deferred) to end the signal
// goroutine and wait for the callbacks. All methods are safe for concurrent
// use.
type ShutdownCoordinator struct {
	once sync.Once
	cfg  CoordinatorConfig

	ctx    context.Context
	cancel context.CancelCauseFunc

	// sigCh is owned by the coordinator and never closed: signal.Notify (or
	// a test) sends to it, the watch goroutine reads it.
	sigCh chan os.Signal
	// quit is closed by Stop to end the watch goroutine.
	quit chan struct{}
	// notify and stopNotify are signal.Notify and signal.Stop; tests swap
	// them so no real signal handler is installed.
	notify     func(c chan<- os.Signal, sig ...os.Signal)
	stopNotify func(c chan<- os.Signal)

	// wg counts the watch goroutine and the callback runner; Stop waits.
	wg sync.WaitGroup

	mu          sync.Mutex
	triggered   bool
	triggeredAt time.Time // when shutdown began; the callbacks' budget counts from here
	installed   bool
	stopped     bool
	queue       []*callback   // callbacks not yet started, in registration order
	running     bool          // a callback runner goroutine is active
	idle        chan struct{} // closed while no runner is active
	errs        []error       // callback errors, in the order they returned
}

// NewShutdownCoordinator returns a coordinator configured by cfg, after
// [CoordinatorConfig.Validate]; on invalid input it returns nil and that
// error (wrapping [ErrInvalidConfig]). It installs no signal handler and
// starts no goroutine: call Install for that.
func NewShutdownCoordinator(cfg CoordinatorConfig) (*ShutdownCoordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &ShutdownCoordinator{cfg: cfg}
	c.init()
	return c, nil
}

// init fills in defaults and creates the channels, once.
func (c *ShutdownCoordinator) init() {
	c.once.Do(func() {
		c.cfg = c.cfg.withDefaults()
		c.ctx, c.cancel = context.WithCancelCause(context.Background())
		// Room for the first and the second signal, so signal.Notify
		// never drops the one that should exit the process.
		c.sigCh = make(chan os.Signal, 2)
		c.quit = make(chan struct{})
		c.notify = signal.Notify
		c.stopNotify = signal.Stop
		c.idle = make(chan struct{})
		close(c.idle)
	})
}

// Trigger begins shutdown, as the first signal would: it cancels Context
// (cause [ErrShutdown]), closes Done, starts the registered callbacks and so
// stops every attached [LoopGroup]. Calls after the first do nothing. A
// Trigger after Stop still cancels Context but runs no callbacks. It never
// blocks on the callbacks; use Wait for them.
func (c *ShutdownCoordinator) Trigger() { c.trigger(ErrShutdown) }

// trigger begins shutdown with the given cause and reports whether this call
// began it.
func (c *ShutdownCoordinator) trigger(cause error) bool {
	c.init()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.triggered {
		return false
	}
	c.triggered = true
	c.triggeredAt = time.Now()
	c.cancel(cause)
	c.startRunnerLocked()
	return true
}

// Done returns a channel that is closed when shutdown has begun (first
// signal, Trigger, or an attached LoopGroup shutting down). It is the same
// channel on every call.
func (c *ShutdownCoordinator) Done() <-chan struct{} {
	c.init()
	return c.ctx.Done()
}

// Context returns a context that is cancelled when shutdown begins; its
// [context.Cause] then wraps [ErrShutdown] and tells why (signal name,
// Trigger, or the LoopGroup's reason). It carries no values and no deadline.
func (c *ShutdownCoordinator) Context() context.Context {
	c.init()
	return c.ctx
}

// Wait blocks until shutdown has begun and every shutdown callback
// registered so far has returned, then returns their errors joined with
// [errors.Join] (nil if all returned nil); each error names its callback.
// If ctx is done first it returns ctx.Err(). Wait may be called many times
// and from many goroutines.
func (c *ShutdownCoordinator) Wait(ctx context.Context) error {
	c.init()
	select {
	case <-c.ctx.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		c.mu.Lock()
		idle, running := c.idle, c.running
		if !running {
			err := errors.Join(c.errs...)
			c.mu.Unlock()
			return err
		}
		c.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Stop releases the signal handler (signal.Stop), ends the signal goroutine
// and waits for it and for any shutdown callbacks still running (each is
// bounded by CallbackTimeout). It does not begin shutdown. After Stop,
// Install returns [ErrCoordinatorStopped], Register does nothing, and
// signals get their default behaviour again. Stop is idempotent; every call
// waits, so never call it from a shutdown callback or from the Exit func
// (both run on goroutines Stop waits for).
func (c *ShutdownCoordinator) Stop() {
	c.init()
	c.mu.Lock()
	if !c.stopped {
		c.stopped = true
		if c.installed {
			c.stopNotify(c.sigCh)
			close(c.quit)
		}
	}
	c.mu.Unlock()
	c.wg.Wait()
}
