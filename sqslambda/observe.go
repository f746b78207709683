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

// processEnd reports the end of record i's handler with the consumer's
// outcome of run, which has all but the run's start: Took is counted
// from it to returned, when the handler returned, and Beat0 is the
// heartbeat's last beat then. It is called before the record's lease is
// decided.
func (b *batch) processEnd(i int, returned time.Time, run consumer.HandlerRun) {
	r := &b.runs[i]
	run.Took, run.Beat0 = returned.Sub(r.began), r.beat0
	if b.leases[i] == nil {
		run.Delay = 0 // without a client nothing nacks it: it comes back when its visibility timeout ends
	}
	b.h.cfg.Observer.ProcessEnd(r.ctx, b.msgs[i], run.Event())
}

// observeAbandoned reports record i's handler, still running when Handle
// stopped waiting for it, as abandoned.
func (b *batch) observeAbandoned(i int) {
	r := &b.runs[i]
	b.h.cfg.Observer.ProcessEnd(r.ctx, b.msgs[i], sqsloop.ProcessEvent{Outcome: sqsloop.OutcomeAbandoned, Duration: time.Since(r.began)})
}
