package lifecycle

import (
	"context"
	"errors"
	"fmt"
)

// callback is one registered shutdown callback.
type callback struct {
	name    string
	f       func(ctx context.Context) error
	removed bool // unregistered before it started
}

// Register adds a callback that runs when shutdown begins, and returns a
// function that removes it. Callbacks run as shutdown begins, concurrently
// with the loops' drain (a LoopGroup triggers the coordinator before it
// stops its loops): use them to stop intake (an HTTP server, a health
// check), never to close what the loops still use (a mailbox, a database):
// close those after LoopGroup.Run returns. Never call Stop from a callback:
// Stop waits for the callbacks, so it would wait for itself. Callbacks run one at a time, in registration
// order, in a goroutine the coordinator owns (Stop waits for it), so a slow
// callback delays the ones after it but never the signal handling. All of
// them share one context that is cancelled CallbackTimeout (default 30 s)
// after shutdown began; a callback should return when it is done. A
// callback's error, or a panic (recovered), is reported by Wait, prefixed
// with its name; a nil f is reported the same way.
//
// A callback registered after shutdown has begun still runs, after the
// ones already queued, so a cleanup registered late is not skipped.
// Register after Stop does nothing and returns a no-op.
//
// The returned unregister is idempotent and safe for concurrent use; it
// removes a callback that has not started yet and does nothing once it has.
// Register is safe for concurrent use.
func (c *ShutdownCoordinator) Register(name string, f func(ctx context.Context) error) (unregister func()) {
	c.init()
	cb := &callback{name: name, f: f}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return func() {}
	}
	c.queue = append(c.queue, cb)
	if c.triggered {
		c.startRunnerLocked()
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		cb.removed = true
	}
}

// startRunnerLocked starts the callback runner unless one is active, the
// queue is empty, or the coordinator is stopped. c.mu must be held, which
// also orders wg.Add before Stop's wg.Wait.
func (c *ShutdownCoordinator) startRunnerLocked() {
	if c.running || c.stopped || len(c.queue) == 0 {
		return
	}
	c.running = true
	c.idle = make(chan struct{})
	c.wg.Go(c.runCallbacks)
}

// runCallbacks runs queued callbacks in order until the queue is empty.
func (c *ShutdownCoordinator) runCallbacks() {
	c.mu.Lock()
	deadline := c.triggeredAt.Add(c.cfg.CallbackTimeout) // one budget for every callback, late ones too
	c.mu.Unlock()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for {
		cb := c.next()
		if cb == nil {
			return
		}
		if err := call(ctx, cb); err != nil {
			c.mu.Lock()
			c.errs = append(c.errs, fmt.Errorf("lifecycle: shutdown callback %q: %w", cb.name, err))
			c.mu.Unlock()
		}
	}
}

// next pops the next callback that was not removed, or marks the runner
// idle and returns nil when there is none.
func (c *ShutdownCoordinator) next() *callback {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.queue) > 0 {
		cb := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		if !cb.removed {
			return cb
		}
	}
	c.queue = nil
	c.running = false
	close(c.idle)
	return nil
}

// call runs one callback, turning a nil func or a panic into an error.
func call(ctx context.Context, cb *callback) (err error) {
	if cb.f == nil {
		return errors.New("nil callback func")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return cb.f(ctx)
}
