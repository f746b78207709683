package consumer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// observed tracks, for the observer only (Config.Observer set), the
// sequences whose handler runs now, so that the drain can report the runs
// it abandons and each run ends with exactly one ProcessEnd. Safe for
// concurrent use.
type observed struct {
	mu      sync.Mutex
	running map[*sequence]struct{}
}

// run is one handler run under observation, kept on its sequence (whose
// messages run one at a time; arrive allocates the runs of a receive's
// sequences at once): no allocation per message.
type run struct {
	msg   *sqsloop.Message
	ctx   context.Context // what ProcessStart returned
	began time.Time
}

// observeReceive reports a receive call to the observer.
func (c *Consumer) observeReceive(ctx context.Context, began time.Time, took time.Duration, asked int, msgs []*sqsloop.Message, err error) {
	e := sqsloop.ReceiveEvent{
		Start: began, Duration: took, MaxMessages: asked, Messages: msgs, Err: err,
		Ahead: c.intake.depth(), Held: c.leases.Held() + len(msgs),
	}
	c.cfg.Observer.Received(ctx, e)
}

// processStart reports the start of the handler of m, a message of s, and
// returns the context it runs with.
func (c *Consumer) processStart(ctx context.Context, s *sequence, m *sqsloop.Message, began time.Time) context.Context {
	ctx = c.cfg.Observer.ProcessStart(ctx, m)
	*s.run = run{msg: m, ctx: ctx, began: began}
	o := &c.obs
	o.mu.Lock()
	if o.running == nil {
		o.running = map[*sequence]struct{}{}
	}
	o.running[s] = struct{}{}
	o.mu.Unlock()
	return ctx
}

// processEnd reports r, the end of the handler running for s, unless the
// drain abandoned it (and reported it) already. ctx is the handler's
// context: a run it cut short (the drain budget) is r's CutShort.
func (c *Consumer) processEnd(ctx context.Context, s *sequence, r rules.Run) {
	o := &c.obs
	o.mu.Lock()
	_, ok := o.running[s]
	delete(o.running, s)
	o.mu.Unlock()
	if !ok {
		return // abandoned: reported by the drain
	}
	r.CutShort = errors.Is(context.Cause(ctx), ErrDrainTimeout)
	c.cfg.Observer.ProcessEnd(s.run.ctx, s.run.msg, r.Event())
}

// observeAbandoned reports every handler still running as abandoned: the
// end of a drain whose grace ran out. (Their sequences have nothing left
// to start: the drain gave the rest back.)
func (c *Consumer) observeAbandoned() {
	o := &c.obs
	o.mu.Lock()
	running := o.running
	o.running = nil
	o.mu.Unlock()
	for s := range running {
		r := s.run
		c.cfg.Observer.ProcessEnd(r.ctx, r.msg, sqsloop.ProcessEvent{Outcome: sqsloop.OutcomeAbandoned, Duration: time.Since(r.began)})
	}
}

// observeDrain reports a phase of the drain, with its counts since the
// drain began.
func (c *Consumer) observeDrain(phase string, began time.Time, err error) {
	if c.cfg.Observer == nil {
		return
	}
	st := c.Stats()
	c.cfg.Observer.Drain(sqsloop.DrainEvent{
		Phase: phase, Running: int(c.st.running.Load()),
		GivenBack: int(st.GivenBack - c.drainMark.GivenBack),
		Finished:  int(st.Succeeded + st.Failed - c.drainMark.Succeeded - c.drainMark.Failed),
		Abandoned: int(st.Abandoned), AcksUnsent: int(st.AckUnsent), Took: time.Since(began), Err: err,
	})
}
