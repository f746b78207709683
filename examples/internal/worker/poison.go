package worker

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/sqsloop/sqsloop"
)

// poisonLog records the receive counts of the messages whose handler
// failed with sqsloop.Permanent (the consumer moves them to the
// dead-letter queue at once): a sqsloop.Middleware, as users extend the
// consumer.
type poisonLog struct {
	mu     sync.Mutex
	counts []int
}

func (p *poisonLog) middleware(next sqsloop.Handler) sqsloop.Handler {
	return func(ctx context.Context, m *sqsloop.Message) error {
		err := next(ctx, m)
		if errors.Is(err, sqsloop.ErrPermanent) {
			p.mu.Lock()
			p.counts = append(p.counts, m.ReceiveCount)
			p.mu.Unlock()
		}
		return err
	}
}

// receiveCounts returns the receive counts recorded, in order.
func (p *poisonLog) receiveCounts() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.counts)
}
