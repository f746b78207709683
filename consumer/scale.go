package consumer

import (
	"context"
	"math"
	"time"

	"github.com/sqsloop/sqsloop"
)

// scaleInterval is how often a consumer with an Observer reads its queue's
// approximate counts for the scaling signal: 30 s, as often as KEDA's
// default polling interval. SQS's counts are approximate and may lag by a
// minute; reading them more often would not make them fresher.
const scaleInterval = 30 * time.Second

// scaleSample is the scaling signal (see the package doc) as of one read
// of the queue's counts.
type scaleSample struct {
	at          time.Time
	backlog     int
	perConsumer float64
	recommended int // 0: unknown
}

// watchQueue checks the queue's attributes against the configuration
// (warnQueue): those read at start-up (read), or, unless a read was tried
// there (tried), its own. Then, with an Observer and a mailbox that is an
// sqsloop.AttributesReader, it reads the queue's counts every
// scaleInterval for the scaling signal, until ctx is done. A failed read
// is logged at WARN, once until a read succeeds again.
func (c *Consumer) watchQueue(ctx context.Context, attrs sqsloop.QueueAttributes, read, tried bool) {
	if !tried {
		var err error
		if attrs, read, err = c.readQueue(ctx); err != nil {
			c.warnUnread(err)
		}
	}
	if read {
		c.warnQueue(attrs)
	}
	if _, ok := c.mb.(sqsloop.AttributesReader); !ok || c.cfg.Observer == nil {
		return
	}
	if read && !tried { // else Run sampled those of the start-up
		c.sample(attrs)
	}
	t := time.NewTicker(scaleInterval)
	defer t.Stop()
	warned := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		attrs, ok, err := c.readQueue(ctx)
		switch {
		case ok:
			c.sample(attrs)
			warned = false
		case err != nil && !warned:
			c.warnUnread(err)
			warned = true
		}
	}
}

// sample computes the scaling signal from the queue's counts, with this
// consumer's leases held, concurrency and handler time (see the package
// doc), and keeps it for the observer's next ReceiveEvent.
func (c *Consumer) sample(attrs sqsloop.QueueAttributes) {
	c.scale.Store(scaleOf(attrs, c.leases.Held(), c.cfg.Concurrency, c.intake.runTime(), c.cfg.LatencyTarget, time.Now()))
}

// scaleOf is the scaling signal of a queue with attrs' counts, for a
// consumer holding held leases, running up to slots handlers whose run
// takes took (0: not measured yet), with latency target target (0: none).
func scaleOf(attrs sqsloop.QueueAttributes, held, slots int, took, target time.Duration, now time.Time) *scaleSample {
	backlog, inFlight := float64(attrs.ApproximateMessages), float64(attrs.ApproximateMessagesInFlight)
	per := float64(held)
	if held == 0 {
		per = float64(slots)
	}
	consumers := max(1, math.Round(inFlight/per))
	s := &scaleSample{at: now, backlog: attrs.ApproximateMessages, perConsumer: backlog / consumers}
	if target > 0 && took > 0 {
		busy := inFlight + backlog*took.Seconds()/target.Seconds()
		s.recommended = max(1, int(math.Ceil(busy/float64(slots))))
	}
	return s
}

// scaleFields fills e's scaling signal from the latest sample, if any.
func (c *Consumer) scaleFields(e *sqsloop.ReceiveEvent) {
	if s := c.scale.Load(); s != nil {
		e.QueueReadAt, e.Backlog, e.BacklogPerConsumer, e.RecommendedConsumers = s.at, s.backlog, s.perConsumer, s.recommended
	}
}
