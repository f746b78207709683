package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/internal/rules"
	"github.com/sqsloop/sqsloop/visibility"
)

// Queue is one of the queues a Consumer made by NewQueues serves.
type Queue struct {
	// Mailbox is the queue; each Queue of a consumer has its own.
	Mailbox sqsloop.Mailbox
	// Weight is the queue's share of the handlers while every queue has
	// messages, 1–1,000 (0 means 1): "high" 3 and "low" 1 give high 3 of
	// every 4 handlers. A queue without messages takes no share, so its
	// share goes to the others.
	Weight int
}

// maxWeight bounds Queue.Weight.
const maxWeight = 1000

// NewQueues returns a Consumer of several queues that runs h for each
// message of any of them: the usual way to give SQS priorities (a high and
// a low queue). While every queue has messages the handlers are shared by
// Weight (the messages each queue may hold, running or on their way, are
// the consumer's Concurrency and receive-ahead split by weight, so that
// the handler time each queue gets follows its weight whatever its jobs
// take); a queue whose receive comes back short takes no share until its
// next receive brings messages again (its long polls then hold no
// handler's share, so the others get every handler within a receive round
// trip). It is one consumer: one Run, one Stats (the queues' counts
// summed), one drain and one drain budget for all, a lease owner per queue
// (each serves its own Mailbox) run and stopped together. Each queue's
// visibility timeout is its own when cfg.VisibilityTimeout is 0 (read at
// start-up, as New's); cfg applies to every queue, its limits
// (GroupLimit, RateLimits) across them. The scaling signal and the log's
// queue name are the first queue's.
//
// It returns New's errors, and an error wrapping sqsloop.ErrInvalidArgument
// for no queue, a nil or repeated Mailbox, or a Weight out of range, each
// naming Queues[i].
func NewQueues(queues []Queue, h sqsloop.Handler, cfg Config) (*Consumer, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if len(queues) == 0 {
		bad("queues: want at least one")
	}
	seen := map[sqsloop.Mailbox]bool{}
	for i, q := range queues {
		switch {
		case q.Mailbox == nil:
			bad("Queues[%d].Mailbox: must not be nil", i)
		case seen[q.Mailbox]:
			bad("Queues[%d].Mailbox: the same Mailbox as an earlier queue", i)
		default:
			seen[q.Mailbox] = true
		}
		if q.Weight < 0 || q.Weight > maxWeight {
			bad("Queues[%d].Weight: must be 0 (1) or between 1 and %d, got %d", i, maxWeight, q.Weight)
		}
	}
	if h == nil {
		bad("handler: must not be nil")
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return newConsumer(queues, h, cfg)
}

// queue is one queue of a consumer: its mailbox, its lease owner, its
// dead-letter queue, and the visibility timeout its receives ask for.
type queue struct {
	index  int
	mb     sqsloop.Mailbox
	weight int
	leases *leases.Manager
	dead   *rules.DeadLetters
	vt     time.Duration // 0 until known: Config.VisibilityTimeout, or the queue's own (adoptQueueTimeout)
	vtFrom string        // where vt comes from: "config", "queue", "default"; "" until Run reads the queue's
}

// queueOf returns the queue s was received from: the queue whose lease
// owner holds its leases.
func (c *Consumer) queueOf(s *sequence) *queue {
	return c.queueOwning(s.leases[0])
}

// queueOwning returns the queue whose lease owner holds l.
func (c *Consumer) queueOwning(l *leases.Lease) *queue {
	if len(c.queues) == 1 {
		return c.queues[0]
	}
	o := l.Owner()
	for _, q := range c.queues {
		if q.leases == o {
			return q
		}
	}
	panic("consumer: a lease of no queue of this consumer")
}

// owners are the lease owners of the consumer's queues, one per queue (a
// leases.Manager serves one Mailbox), with the calls the consumer makes of
// all of them at once: one lease owner as far as the consumer can tell.
type owners struct {
	ms     []*leases.Manager
	failed chan struct{} // several queues: closed once one of them failed; nil for one
	once   sync.Once
}

func newOwners(ms []*leases.Manager) *owners {
	o := &owners{ms: ms}
	if len(ms) > 1 {
		o.failed = make(chan struct{})
	}
	return o
}

// Run runs every lease owner until ctx is done or Stop, and returns once
// all have returned.
func (o *owners) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, m := range o.ms {
		wg.Go(func() {
			if o.failed != nil {
				watched := make(chan struct{})
				defer func() { <-watched }()
				stop := make(chan struct{})
				defer close(stop)
				go func() {
					defer close(watched)
					select {
					case <-m.Failed():
						o.once.Do(func() { close(o.failed) })
					case <-stop:
					}
				}()
			}
			_ = m.Run(ctx)
		})
	}
	wg.Wait()
	return nil
}

// Held is how many leases they hold in all.
func (o *owners) Held() int {
	n := 0
	for _, m := range o.ms {
		n += m.Held()
	}
	return n
}

// Stats sums their counts (leases.AddStats).
func (o *owners) Stats() visibility.Stats {
	s := o.ms[0].Stats()
	for _, m := range o.ms[1:] {
		s = leases.AddStats(s, m.Stats())
	}
	return s
}

// Failed is closed once one of them has given up for good (Err says why).
func (o *owners) Failed() <-chan struct{} {
	if o.failed == nil {
		return o.ms[0].Failed()
	}
	return o.failed
}

// Err is why the first of them that gave up did, or nil.
func (o *owners) Err() error {
	for _, m := range o.ms {
		if err := m.Err(); err != nil {
			return err
		}
	}
	return nil
}

// GiveBackAll gives back what every one of them still holds.
func (o *owners) GiveBackAll() {
	for _, m := range o.ms {
		m.GiveBackAll()
	}
}

// Stop stops them all at once, each flushing within ctx, and returns once
// all have returned: ctx's error if it ended first.
func (o *owners) Stop(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, m := range o.ms {
		wg.Go(func() { _ = m.Stop(ctx) })
	}
	wg.Wait()
	return ctx.Err()
}

// Interrupt interrupts them all at once and sums what they did.
func (o *owners) Interrupt(ctx context.Context) leases.Interrupted {
	rs := make([]leases.Interrupted, len(o.ms))
	var wg sync.WaitGroup
	for i, m := range o.ms {
		wg.Go(func() { rs[i] = m.Interrupt(ctx) })
	}
	wg.Wait()
	r := rs[0]
	for _, x := range rs[1:] {
		r.Leases, r.Acked, r.GivenBack, r.Failed = r.Leases+x.Leases, r.Acked+x.Acked, r.GivenBack+x.GivenBack, r.Failed+x.Failed
		if x.VisibleBy.After(r.VisibleBy) {
			r.VisibleBy = x.VisibleBy
		}
	}
	return r
}

// Lengths is the first queue's lease lengths (the start-up log's).
func (o *owners) Lengths() *leases.Lengths { return o.ms[0].Lengths() }

// logQueues adds the queues and their weights to the start-up log, for a
// consumer of several.
func (c *Consumer) logQueues() slog.Attr {
	if len(c.queues) == 1 {
		return slog.String("queue", queueName(c.mb))
	}
	attrs := make([]any, 0, len(c.queues))
	for _, q := range c.queues {
		attrs = append(attrs, slog.Group(fmt.Sprint(q.index), slog.String("queue", queueName(q.mb)), slog.Int("weight", q.weight),
			duration("visibility_timeout", q.vt)))
	}
	return slog.Group("queues", attrs...)
}
