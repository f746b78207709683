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
	known     atomic.Bool // the answer is in: unordered holds it
	unordered atomic.Bool

	mu     sync.Mutex
	asking chan struct{} // closed when the question under way is answered or given up; nil when none is
}

// probeTimeout bounds the one GetQueueAttributes call of orderProbe.
const probeTimeout = 5 * time.Second

// probe asks mb its type, unless it is known, under ctx and for at most
// probeTimeout; a caller that comes while another asks waits for that
// answer (or for ctx). When mb cannot say (no sqsloop.AttributesReader, an
// error, no permission, no answer within probeTimeout), groups stay
// ordered, which is right on both types of queue. It returns ctx's error
// when ctx ends first: then nothing is learnt, and the next call asks
// again.
func (o *orderProbe) probe(ctx context.Context, mb sqsloop.Mailbox) error {
	for !o.known.Load() {
		o.mu.Lock()
		if o.known.Load() {
			o.mu.Unlock()
			return nil
		}
		if asking := o.asking; asking != nil {
			o.mu.Unlock()
			select {
			case <-asking:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		ar, ok := mb.(sqsloop.AttributesReader)
		if !ok {
			o.known.Store(true)
			o.mu.Unlock()
			return nil
		}
		asking := make(chan struct{})
		o.asking = asking
		o.mu.Unlock()

		qctx, cancel := context.WithTimeout(ctx, probeTimeout)
		a, err := ar.QueueAttributes(qctx)
		cancel()

		o.mu.Lock()
		o.asking = nil
		close(asking)
		if err == nil || ctx.Err() == nil {
			o.unordered.Store(err == nil && !a.FIFO)
			o.known.Store(true)
		}
		o.mu.Unlock()
		if !o.known.Load() {
			return ctx.Err()
		}
	}
	return nil
}

// ordered reports whether a group's messages must go one at a time.
func (o *orderProbe) ordered() bool { return !o.unordered.Load() }
