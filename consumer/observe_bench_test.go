package consumer

import (
	"testing"

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
