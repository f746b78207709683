package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
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
	if c.gate != nil {
		c.gate.close() // those waiting for a limit
	}
	for {
		s, ok := handlers.waiting()
		if !ok {
			break
		}
		s.giveBack()
		s.done()
		c.intake.release(c.queueOf(s).index, len(s.msgs))
	}
	for _, s := range c.waiting.all() {
		s.giveBack()
	}
}

// minFlush is the least time the lease owner gets, once the handlers are
// done, to send what they decided and give back the rest: 1 s, for a
// drain whose budget is spent (its handlers cancelled) or nearly so.
// Otherwise it gets what is left of the budget.
const minFlush = time.Second

// drainBudget says when the drain budget ends. Safe for concurrent use.
type drainBudget struct {
	timeout   time.Duration // Config.ShutdownTimeout, after defaults
	byContext bool          // ShutdownTimeout was left zero: Shutdown's deadline, when it has one, is the budget
	moved     chan struct{} // capacity 1: signalled when Shutdown set a deadline

	mu       sync.Mutex
	deadline time.Time // Shutdown's context's deadline; zero when it has none
}

// limit records the deadline of Shutdown's context, once.
func (b *drainBudget) limit(d time.Time) {
	b.mu.Lock()
	if b.deadline.IsZero() {
		b.deadline = d
	}
	b.mu.Unlock()
	select {
	case b.moved <- struct{}{}:
	default:
	}
}

// end returns when the budget of a drain begun at began ends: began +
// ShutdownTimeout, or Shutdown's deadline when it is earlier; with
// ShutdownTimeout left zero, Shutdown's deadline alone when there is one.
// byShutdown reports that the end is Shutdown's deadline.
func (b *drainBudget) end(began time.Time) (end time.Time, byShutdown bool) {
	b.mu.Lock()
	d := b.deadline
	b.mu.Unlock()
	end = began.Add(b.timeout)
	if !d.IsZero() && (b.byContext || d.Before(end)) {
		return d, true
	}
	return end, false
}

// awaitHandlers waits for in-flight handlers for what is left of the drain
// budget (drainBudget.end), or until Shutdown's context ends. When it runs
// out it cancels their contexts (cancel, cause ErrDrainTimeout), waits
// DrainGrace, gives back what the handlers still running hold, and returns
// an error wrapping ErrDrainTimeout; nil when every handler finished
// within the budget. It runs once no receive is in flight, so no handler
// cancelled here gives back a message that a receive still waiting in its
// long poll would take again.
func (c *Consumer) awaitHandlers(handlers *pool, cancel context.CancelCauseFunc, drainBegan time.Time) error {
	// idle outlives Run only while abandoned handlers run: it ends with them.
	idle := make(chan struct{})
	go func() { handlers.wait(); close(idle) }()
	end, byShutdown := c.budget.end(drainBegan)
	budget := time.NewTimer(time.Until(end))
	defer budget.Stop()
	const shutdownEnded = "Shutdown's context ended"
	spent := ""
	for spent == "" {
		select {
		case <-idle:
			return nil
		case <-c.budget.moved: // Shutdown's deadline came after the drain began
			end, byShutdown = c.budget.end(drainBegan)
			budget.Reset(time.Until(end))
		case <-budget.C:
			spent = fmt.Sprintf("the %v drain budget", end.Sub(drainBegan).Round(time.Millisecond))
			if byShutdown {
				spent = shutdownEnded
			}
		case <-c.cutShort:
			spent = shutdownEnded
		}
	}
	c.spentByCtx.Store(spent == shutdownEnded)
	cancelled := c.st.running.Load()
	c.cfg.Logger.Warn("consumer: drain budget exhausted; cancelling in-flight handlers",
		duration("budget", end.Sub(drainBegan).Round(time.Millisecond)), slog.Int64("handlers", cancelled))
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

// stopLeases stops the lease owner once the handlers are done: it sends
// what they decided (acks, nacks, give-backs), retrying calls that fail or
// time out, until the drain budget ends (or Shutdown's context did: then
// for minFlush), at least minFlush from now, or until Interrupt.
func (c *Consumer) stopLeases(drainBegan time.Time) {
	by, _ := c.budget.end(drainBegan)
	select {
	case <-c.cutShort:
		by = time.Time{}
	default:
	}
	if floor := time.Now().Add(minFlush); by.Before(floor) {
		by = floor
	}
	ctx, cancel := context.WithDeadline(c.interrupted, by)
	defer cancel()
	_ = c.leases.Stop(ctx) // what is left unsent then is logged, and counted (AckUnsent)
}

// beginDrain marks the drain begun, now, and returns when: Ready reports
// it at once, and drainStarted logs it. It runs once, before anything is
// given back, so that the counts at the end are the drain's.
func (c *Consumer) beginDrain() time.Time {
	c.state.CompareAndSwap(stateRunning, stateDraining)
	began := time.Now()
	c.drainStarted(began)
	return began
}

// drainStarted logs the start of the drain and remembers the counts it
// reports at the end. It runs once, on the receive watcher's goroutine or
// Run's; drainEnded reads drainMark after that goroutine has ended.
func (c *Consumer) drainStarted(began time.Time) {
	c.drainMark = c.Stats()
	end, _ := c.budget.end(began)
	c.cfg.Logger.Info("consumer: drain began; receiving stopped",
		slog.Int64("in_flight", c.st.running.Load()), duration("budget", end.Sub(began).Round(time.Millisecond)))
	c.observeDrain(sqsloop.DrainBegan, began, nil)
}

// drainEnded logs the end of the drain with what it did: at WARN when
// decided acks were left unsent (those messages run again).
func (c *Consumer) drainEnded(began time.Time, err error) {
	st := c.Stats()
	level := slog.LevelInfo
	if st.AckUnsent > 0 {
		level = slog.LevelWarn
	}
	c.cfg.Logger.LogAttrs(context.Background(), level, "consumer: drain ended",
		slog.Int64("given_back", st.GivenBack-c.drainMark.GivenBack),
		slog.Int64("finished", st.Succeeded+st.Failed-c.drainMark.Succeeded-c.drainMark.Failed),
		slog.Int64("abandoned", st.Abandoned),
		slog.Int64("acks_unsent", st.AckUnsent),
		duration("took", time.Since(began)), slog.Any("error", err))
	c.observeDrain(sqsloop.DrainEnded, began, err)
}
