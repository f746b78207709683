package producer

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
)

// orderProbe finds out, once, whether the queue keeps message groups in
// order (a FIFO queue) or not (a standard queue, where a MessageGroupID
// names a fair-queue tenant).
type orderProbe struct {
	once      sync.Once
	unordered atomic.Bool
}

// probeTimeout bounds the one GetQueueAttributes call of orderProbe.
const probeTimeout = 5 * time.Second

// probe asks mb its type, the first time it is called: when mb cannot say
// (no sqsloop.AttributesReader, an error, no permission), groups stay
// ordered, which is right on both types of queue.
func (o *orderProbe) probe(ctx context.Context, mb sqsloop.Mailbox) {
	o.once.Do(func() {
		ar, ok := mb.(sqsloop.AttributesReader)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
		defer cancel()
		if a, err := ar.QueueAttributes(ctx); err == nil && !a.FIFO {
			o.unordered.Store(true)
		}
	})
}

// ordered reports whether a group's messages must go one at a time.
func (o *orderProbe) ordered() bool { return !o.unordered.Load() }
