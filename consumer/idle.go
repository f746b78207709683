package consumer

import (
	"log/slog"
	"sync"
	"time"
)

// idleClock tells how long the queue has been empty, with nothing in
// flight, for Config.ExitWhenIdle: since the last moment the consumer was
// busy (Run began or resumed, a receive brought messages or failed, a
// handler returned, something was in flight). A receive loop is waiting in
// a long poll whenever a handler slot is free, and a long poll comes back
// as soon as a message is visible, so the time since then is covered by
// receives that came back empty or are still waiting. Safe for concurrent
// use.
type idleClock struct {
	mu     sync.Mutex
	busyAt time.Time // the last moment the consumer was seen busy (or Run began)
}

// reset starts the count again at now.
func (i *idleClock) reset(now time.Time) {
	i.mu.Lock()
	i.busyAt = now
	i.mu.Unlock()
}

// idleFor returns how long the consumer has been idle at now.
func (i *idleClock) idleFor(now time.Time) time.Duration {
	i.mu.Lock()
	defer i.mu.Unlock()
	return now.Sub(i.busyAt)
}

// noteHandled starts the ExitWhenIdle count again as a handler returns:
// the queue was not idle while it ran.
func (c *Consumer) noteHandled() {
	if c.cfg.ExitWhenIdle > 0 {
		c.idle.reset(time.Now())
	}
}

// noteReceive follows a receive that came back with n messages and err,
// for ExitWhenIdle: messages, an error, or anything in flight start the
// count again.
func (c *Consumer) noteReceive(n int, err error) {
	if c.cfg.ExitWhenIdle > 0 && (n > 0 || err != nil || c.busy()) {
		c.idle.reset(time.Now())
	}
}

// busy reports whether a message is in flight: held by the lease owner, or
// its handler running.
func (c *Consumer) busy() bool {
	return c.leases.Held() > 0 || c.st.running.Load() > 0
}

// watchIdle begins the drain (Run then returns nil) once the consumer has
// been idle for ExitWhenIdle (idleClock), and returns; or when stop is
// closed (the drain began otherwise). It looks when the count would reach
// ExitWhenIdle, not when a receive comes back: the long poll in flight is
// then cut short by the drain (within maxReceiveGrace), so Run returns
// within ExitWhenIdle and a round trip of the last busy moment, not a
// long poll later. Something in flight, or a pause, starts the count
// again.
func (c *Consumer) watchIdle(stop <-chan struct{}) {
	for {
		now := time.Now()
		paused, changed := c.pause.state()
		if paused {
			c.idle.reset(now)
			select {
			case <-changed: // resumed: the count starts again
				c.idle.reset(time.Now())
			case <-stop:
				return
			}
			continue
		}
		if c.busy() {
			c.idle.reset(now)
		}
		idle := c.idle.idleFor(now)
		if idle >= c.cfg.ExitWhenIdle {
			c.cfg.Logger.Info("consumer: the queue was empty with nothing in flight for ExitWhenIdle; exiting",
				duration("exit_when_idle", c.cfg.ExitWhenIdle), duration("idle", idle.Round(time.Millisecond)),
				slog.Int64("received", c.st.received.Load()))
			c.drainOne.Do(func() { close(c.drainReq) })
			return
		}
		t := time.NewTimer(c.cfg.ExitWhenIdle - idle)
		select {
		case <-t.C:
		case <-changed:
			t.Stop()
		case <-stop:
			t.Stop()
			return
		}
	}
}
