package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// BenchmarkConsumerObserver is BenchmarkConsumer with an Observer: none
// (what the hooks cost when nothing listens: compare with
// BenchmarkConsumer of a build without them), and sqsloop.NopObserver (the
// consumer's own bookkeeping for a listener that does nothing). One op is
// one message received and handled.
func BenchmarkConsumerObserver(b *testing.B) {
	for _, bc := range []struct {
		name string
		obs  sqsloop.Observer
	}{{"none", nil}, {"nop", sqsloop.NopObserver{}}} {
		b.Run("observer="+bc.name, func(b *testing.B) { consumeAll(b, bc.obs) })
	}
}

// BenchmarkHooksWithoutObserver measures, on one goroutine, exactly what
// the event hooks add to one message's path when no Observer is set: the
// nil checks around the handler and the receive, and the lease owner's
// per-call check (one extension call per 10 messages). Target < 50 ns.
func BenchmarkHooksWithoutObserver(b *testing.B) {
	c := &Consumer{}
	m := &sqsloop.Message{}
	ctx := context.Background()
	var sink context.Context
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		mctx := ctx
		began := time.Time{}
		if c.cfg.Observer != nil { // receive (per call; counted per message here)
			c.observeReceive(ctx, began, 0, 1, nil, nil)
		}
		if c.cfg.Observer != nil { // process start
			mctx = c.processStart(mctx, m, nil, began)
		}
		if c.cfg.Observer != nil { // process end
			c.processEnd(mctx, m, time.Time{}, false, nil, 0, failure{})
		}
		sink = mctx
	}
	_ = sink
}
