package sqslambda

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// observedRun is one record's handler run under observation (Config.Observer).
type observedRun struct {
	ctx   context.Context // what ProcessStart returned
	began time.Time
}

// processStart reports the start of record i's handler, with ctx, and
// returns the context the handler runs with.
func (b *batch) processStart(ctx context.Context, i int) context.Context {
	began := time.Now()
	ctx = b.h.cfg.Observer.ProcessStart(ctx, b.msgs[i])
	b.runs[i] = observedRun{ctx: ctx, began: began}
	return ctx
}

// ended tells record i's lease, if it has one, that its handler has just
// returned err, and returns the run as far as it is known before its
// outcome is decided: whether its lease was lost by then, and whether the
// lease owner counts that loss as never beaten (how long it took: with an
// observer only).
func (b *batch) ended(i int, err error) rules.Run {
	r := rules.Run{Err: err}
	if l := b.leases[i]; l != nil {
		lost, never := l.Returned()
		r.LeaseLost, r.NeverBeat = lost != nil, never
	}
	if b.runs != nil {
		r.Took = time.Since(b.runs[i].began)
	}
	return r
}

// processEnd reports run, the end of record i's handler (from ended, with
// its outcome decided: CutShort, DeadLettered and Delay), with the
// consumer's outcome. It is called before the record's lease is told.
func (b *batch) processEnd(i int, run rules.Run) {
	if b.leases[i] == nil {
		run.Delay = 0 // without a client nothing nacks it: it comes back when its visibility timeout ends
	}
	b.h.cfg.Observer.ProcessEnd(b.runs[i].ctx, b.msgs[i], run.Event())
}

// observeAbandoned reports record i's handler, still running when Handle
// stopped waiting for it, as abandoned.
func (b *batch) observeAbandoned(i int) {
	r := &b.runs[i]
	b.h.cfg.Observer.ProcessEnd(r.ctx, b.msgs[i], sqsloop.ProcessEvent{Outcome: sqsloop.OutcomeAbandoned, Duration: time.Since(r.began)})
}
