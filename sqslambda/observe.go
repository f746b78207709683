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

// processEnd reports the end of record i's handler, beating hb, which
// returned err (cut short by the deadline: cutShort; failed: retried
// after delay), with the consumer's outcome. It is called before the
// record's lease is decided, and before the beat that marks the end of the
// record.
func (b *batch) processEnd(i int, hb *heartbeat.Heartbeat, err error, cutShort bool, delay time.Duration) {
	r := &b.runs[i]
	l := b.leases[i]
	e := consumer.HandlerRun{
		Message: b.msgs[i], Err: err, Took: time.Since(r.began), LeaseLost: l != nil && l.Err() != nil,
		Beat0: r.beat0, LastBeat: hb.LastBeat(), CutShort: cutShort,
	}
	if l != nil {
		e.Delay = delay // without a client nothing nacks it: it comes back when its visibility timeout ends
	}
	b.h.cfg.Observer.ProcessEnd(r.ctx, b.msgs[i], e.Event())
}

// observeAbandoned reports record i's handler, still running when Handle
// stopped waiting for it, as abandoned.
func (b *batch) observeAbandoned(i int) {
	r := &b.runs[i]
	b.h.cfg.Observer.ProcessEnd(r.ctx, b.msgs[i], sqsloop.ProcessEvent{Outcome: sqsloop.OutcomeAbandoned, Duration: time.Since(r.began)})
}
