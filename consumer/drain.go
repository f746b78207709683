package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
)

// DrainGrace is how long handlers whose contexts were cancelled because the
// drain budget ran out get to return, before the messages they still hold
// are given back (visibility 0, no more extensions) and Run returns: 500 ms.
// A handler still running then is abandoned: Run no longer waits for it,
// its goroutine is left to the process's exit, and what it returns later
// is ignored (its message was given back).
const DrainGrace = 500 * time.Millisecond

// giveBackUnstarted gives back at once the messages received and not
// started: those waiting in the receive-ahead buffer for a handler, and
// those waiting behind a running one of their FIFO group. (A worker that
// takes a sequence once the drain has begun gives it back too, also once
// the receives are back.)
func (c *Consumer) giveBackUnstarted(handlers *pool) {
	for {
		s, ok := handlers.waiting()
		if !ok {
			break
		}
		s.giveBack()
		s.done()
		c.intake.release(len(s.msgs))
	}
	for _, s := range c.waiting.all() {
		s.giveBack()
	}
}

// awaitHandlers waits for in-flight handlers for what is left of the drain
// budget: budgetLeft, or until Shutdown's context ends. When it runs out
// it cancels their contexts (cancel, cause ErrDrainTimeout), waits
// DrainGrace, gives back what the handlers still running hold, and returns
// an error wrapping ErrDrainTimeout; nil when every handler finished
// within the budget. It runs once no receive is in flight, so no handler
// cancelled here gives back a message that a receive still waiting in its
// long poll would take again.
func (c *Consumer) awaitHandlers(handlers *pool, cancel context.CancelCauseFunc, drainBegan time.Time, budgetLeft time.Duration) error {
	// idle outlives Run only while abandoned handlers run: it ends with them.
	idle := make(chan struct{})
	go func() { handlers.wait(); close(idle) }()
	budget := time.NewTimer(max(budgetLeft, 0))
	defer budget.Stop()
	spent := fmt.Sprintf("the %v drain budget", c.cfg.ShutdownTimeout)
	select {
	case <-idle:
		return nil
	case <-budget.C:
	case <-c.cutShort:
		spent = "Shutdown's context ended"
	}
	cancelled := c.st.running.Load()
	c.cfg.Logger.Warn("consumer: drain budget exhausted; cancelling in-flight handlers",
		duration("shutdown_timeout", c.cfg.ShutdownTimeout), slog.Int64("handlers", cancelled))
	c.observeDrain(sqsloop.DrainBudgetExhausted, drainBegan, nil)
	cancel(ErrDrainTimeout)
	grace := time.NewTimer(DrainGrace)
	defer grace.Stop()
	select {
	case <-idle:
		return fmt.Errorf("consumer: %d handlers cancelled after %s: %w", cancelled, spent, ErrDrainTimeout)
	case <-grace.C:
	}
	abandoned := c.st.running.Load()
	c.st.abandoned.Add(abandoned)
	c.leases.GiveBackAll()
	c.cfg.Logger.Error("consumer: handlers ignored their cancelled context; their messages were given back and they are abandoned",
		slog.Int64("abandoned", abandoned), duration("grace", DrainGrace))
	if c.cfg.Observer != nil {
		c.observeAbandoned()
		c.observeDrain(sqsloop.DrainAbandoned, drainBegan, nil)
	}
	return fmt.Errorf("consumer: %d handlers cancelled after %s, %d of them abandoned (still running %v later; left to the process's exit): %w",
		cancelled, spent, abandoned, DrainGrace, ErrDrainTimeout)
}

// drainStarted logs the start of the drain and remembers the counts it
// reports at the end. It runs once, on the receive watcher's goroutine;
// drainEnded reads drainMark after that goroutine has ended.
func (c *Consumer) drainStarted() {
	c.drainMark = c.Stats()
	c.cfg.Logger.Info("consumer: drain began; receiving stopped",
		slog.Int64("in_flight", c.st.running.Load()), duration("budget", c.cfg.ShutdownTimeout))
	c.observeDrain(sqsloop.DrainBegan, time.Now(), nil)
}

// drainEnded logs the end of the drain with what it did.
func (c *Consumer) drainEnded(began time.Time, err error) {
	st := c.Stats()
	c.cfg.Logger.Info("consumer: drain ended",
		slog.Int64("given_back", st.GivenBack-c.drainMark.GivenBack),
		slog.Int64("finished", st.Succeeded+st.Failed-c.drainMark.Succeeded-c.drainMark.Failed),
		slog.Int64("abandoned", st.Abandoned),
		duration("took", time.Since(began)), slog.Any("error", err))
	c.observeDrain(sqsloop.DrainEnded, began, err)
}
