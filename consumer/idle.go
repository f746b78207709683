package consumer

import (
	"log/slog"
	"sync"
	"time"
)

// idleClock tells how long the queue has been empty, with nothing in
// flight, for Config.ExitWhenIdle: since the last moment the consumer was
// busy (Run began or resumed, a receive brought messages or failed, a
// handler returned, something was in flight as a receive came back). A
// receive loop is waiting in a long poll whenever a handler slot is free,
// so the time since then is covered by receives that came back empty.
// Safe for concurrent use.
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
// count again; an empty receive with nothing in flight once the count
// reaches ExitWhenIdle begins the drain (Run then returns nil).
func (c *Consumer) noteReceive(n int, err error) {
	if c.cfg.ExitWhenIdle <= 0 {
		return
	}
	now := time.Now()
	if n > 0 || err != nil || c.leases.Held() > 0 || c.st.running.Load() > 0 {
		c.idle.reset(now)
		return
	}
	idle := c.idle.idleFor(now)
	if idle < c.cfg.ExitWhenIdle {
		return
	}
	c.idleOnce.Do(func() {
		c.cfg.Logger.Info("consumer: the queue was empty with nothing in flight for ExitWhenIdle; exiting",
			duration("exit_when_idle", c.cfg.ExitWhenIdle), duration("idle", idle.Round(time.Millisecond)),
			slog.Int64("received", c.st.received.Load()))
		c.drainOne.Do(func() { close(c.drainReq) })
	})
}
