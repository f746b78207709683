package consumer

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// pauseSwitch is the drain mode without exit: set by Pause, cleared by
// Resume. Safe for concurrent use.
type pauseSwitch struct {
	mu      sync.Mutex
	paused  bool
	changed chan struct{} // closed at the next change
}

// set turns the switch on or off.
func (p *pauseSwitch) set(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == on {
		return
	}
	p.paused = on
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

// state returns whether the switch is on, and a channel closed at its next
// change.
func (p *pauseSwitch) state() (paused bool, changed <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.paused, p.changed
}

// Pause puts the consumer in drain mode without exit: it stops receiving
// (the receive calls in flight get the drain's grace to come back, and
// what they bring then is given back), and the handlers finish what was
// received, the lease owner keeping their leases and sending their acks
// and nacks, while Run goes on. Ready reports the pause, and Paused tells
// when nothing is in flight any more. Resume receives again; Shutdown (or
// Run's context) drains and ends Run as usual. For a blue/green switch, or
// an operator pausing a queue (lifecycle.LoopGroup.DrainHandler). It
// returns at once, does nothing to a paused consumer, and may be called
// before Run (which then starts paused). Safe for concurrent use.
func (c *Consumer) Pause() { c.pause.set(true) }

// Resume ends a pause: the consumer receives again. It does nothing to a
// consumer that is not paused, nor once the drain has begun; it works as
// often as Pause does. Safe for concurrent use.
func (c *Consumer) Resume() { c.pause.set(false) }

// Paused reports whether the consumer is paused (Pause), and how many
// messages it still holds: received and not yet acked, nacked or given
// back (running, waiting for a handler, or being settled), and a receive
// call still on the wire counted as one (it may bring messages, which are
// then given back: a pause gives them the drain's grace, at most 250 ms,
// to come back). Paused with none in flight, it is drained: nothing more
// will come from it or be left hidden by it. Safe for concurrent use;
// never blocks.
func (c *Consumer) Paused() (paused bool, inFlight int) {
	paused, _ = c.pause.state()
	wire := c.onWire.Load() // before the leases: a receive's count goes after its messages are held
	return paused, int(wire) + c.leases.Held()
}

// awaitResume waits, with the receive loops stopped by a pause, for
// Resume (resumed true), or for the drain to begin: Shutdown, ctx done, or
// the lease owner giving up (its error is returned). It logs the pause and
// the resume.
func (c *Consumer) awaitResume(ctx context.Context) (resumed bool, drainBegan time.Time, err error) {
	c.cfg.Logger.Info("consumer: paused (drain mode); receiving stopped, in-flight messages finish",
		slog.Int("in_flight", c.leases.Held()))
	began := time.Now()
	for {
		paused, changed := c.pause.state()
		if !paused {
			c.cfg.Logger.Info("consumer: resumed; receiving", duration("paused_for", time.Since(began)))
			return true, time.Time{}, nil
		}
		select {
		case <-changed:
			continue
		case <-c.drainReq:
		case <-ctx.Done():
		case <-c.leases.Failed():
			err = c.leases.Err()
			c.cfg.Logger.Error("consumer: the lease owner failed for good; draining", slog.Any("error", err))
		}
		return false, c.beginDrain(), err
	}
}
