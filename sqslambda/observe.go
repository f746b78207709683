package sqslambda

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// observedRun is one record's handler run under observation (Config.Observer).
type observedRun struct {
	ctx   context.Context // what ProcessStart returned
	began time.Time
	beat0 time.Time // the heartbeat's last beat when the run began
}

// processStart reports the start of record i's handler, beating hb, with
// ctx, and returns the context the handler runs with.
func (b *batch) processStart(ctx context.Context, i int, hb *heartbeat.Heartbeat) context.Context {
	began := time.Now()
	ctx = b.h.cfg.Observer.ProcessStart(ctx, b.msgs[i])
	b.runs[i] = observedRun{ctx: ctx, began: began, beat0: hb.LastBeat()}
	return ctx
}

// ended returns the run of record i's handler, beating hb, which has just
// returned err, as far as it is known before its outcome is decided: how
// long it took, whether its lease was lost, and its heartbeat's beats.
func (b *batch) ended(i int, hb *heartbeat.Heartbeat, err error) consumer.HandlerRun {
	r := &b.runs[i]
	l := b.leases[i]
	return consumer.HandlerRun{
		Err: err, Took: time.Since(r.began), LeaseLost: l != nil && l.Err() != nil,
		Beat0: r.beat0, LastBeat: hb.LastBeat(),
	}
}

// processEnd reports run, the end of record i's handler (from ended, with
// its outcome decided: CutShort, DeadLettered and Delay), with the
// consumer's outcome. It is called before the record's lease is told.
func (b *batch) processEnd(i int, run consumer.HandlerRun) {
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
