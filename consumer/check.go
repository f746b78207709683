package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/leases"
)

// queueCheckTimeout bounds the start-up GetQueueAttributes call.
const queueCheckTimeout = 10 * time.Second

// lowMaxReceiveCount is the maxReceiveCount at or under which a few
// interrupted deliveries (deploys, lost leases) can push a healthy message
// into the dead-letter queue.
const lowMaxReceiveCount = 3

// readQueue reads the queue's attributes, bounded by queueCheckTimeout and
// ctx, and reports whether it did: not when the mailbox is no
// sqsloop.AttributesReader, nor when the read failed (err; nil when ctx
// was cancelled, as shutdown began: nothing to report).
func (c *Consumer) readQueue(ctx context.Context) (attrs sqsloop.QueueAttributes, ok bool, err error) {
	return readQueueOf(ctx, c.mb)
}

// readQueueOf is readQueue of mb, one of the consumer's queues.
func readQueueOf(ctx context.Context, mb sqsloop.Mailbox) (attrs sqsloop.QueueAttributes, ok bool, err error) {
	ar, ok := mb.(sqsloop.AttributesReader)
	if !ok {
		return sqsloop.QueueAttributes{}, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, queueCheckTimeout)
	defer cancel()
	attrs, err = ar.QueueAttributes(ctx)
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return sqsloop.QueueAttributes{}, false, nil // shutdown began: no warning about a read it cut short
	case err != nil:
		return sqsloop.QueueAttributes{}, false, err
	}
	return attrs, true, nil
}

// warnUnread logs a failed read of the queue's attributes.
func (c *Consumer) warnUnread(err error) {
	c.cfg.Logger.Warn("consumer: could not read the queue's attributes", slog.Any("error", err))
}

// warnQueue logs what in attrs fights the consumer's configuration.
func (c *Consumer) warnQueue(attrs sqsloop.QueueAttributes) {
	c.checkQueue(c.queues[0], attrs)
}

// checkQueue logs what in attrs, q's, fights the consumer's configuration,
// and gives the gate q's redrive policy.
func (c *Consumer) checkQueue(q *queue, attrs sqsloop.QueueAttributes) {
	if c.gate != nil {
		c.gate.setRedrive(q.index, attrs.MaxReceiveCount)
	}
	cfg := c.cfg
	cfg.VisibilityTimeout = q.vt
	for _, w := range queueWarnings(cfg, attrs) {
		if len(c.queues) > 1 {
			w = queueName(q.mb) + ": " + w
		}
		c.cfg.Logger.Warn("consumer: " + w)
	}
}

// checkOthers reads the attributes of the queues after the first (a
// consumer of several), unless adoptQueueTimeout did, and checks them
// (checkQueue); the first's are watchQueue's. A failed read is logged at
// WARN.
func (c *Consumer) checkOthers(ctx context.Context, adopted bool) {
	if adopted {
		return
	}
	for _, q := range c.queues[1:] {
		attrs, ok, err := readQueueOf(ctx, q.mb)
		switch {
		case err != nil:
			c.cfg.Logger.Warn("consumer: could not read the queue's attributes", slog.String("queue", queueName(q.mb)), slog.Any("error", err))
		case ok:
			c.checkQueue(q, attrs)
		}
	}
}

// adoptQueueTimeout, for a Config.VisibilityTimeout left zero, takes each
// queue's visibility timeout as its receives', read from its attributes:
// the receives ask for it and its lease owner's Interval follows it (the
// first queue's is the consumer's, in its Config and logs). When a queue
// cannot say (no sqsloop.AttributesReader, a failed read, a visibility
// timeout of 0) it takes defaultVisibilityTimeout (5 min). It returns the
// first queue's attributes and whether they were read (the others are
// checked here: checkQueue), and the problems of Config.Visibility with a
// queue's visibility timeout, each named "Visibility.…" and wrapping
// sqsloop.ErrInvalidArgument. Run calls it before it starts anything.
func (c *Consumer) adoptQueueTimeout(ctx context.Context) (sqsloop.QueueAttributes, bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { // Shutdown cuts the read short too
		defer close(watched)
		select {
		case <-c.drainReq:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() { cancel(); <-watched }()
	var first sqsloop.QueueAttributes
	var firstRead bool
	for _, q := range c.queues {
		attrs, ok, err := readQueueOf(ctx, q.mb)
		if err != nil {
			c.warnUnread(err)
		}
		vt, from := defaultVisibilityTimeout, "default"
		switch {
		case ok && attrs.VisibilityTimeout >= time.Second:
			vt, from = attrs.VisibilityTimeout, "queue"
		case ok:
			c.cfg.Logger.Warn("consumer: the queue's visibility timeout is 0, which leaves nothing to extend; receiving with "+defaultVisibilityTimeout.String()+
				" (set VisibilityTimeout)", slog.String("queue", queueName(q.mb)))
		}
		lc, err := leases.ForVisibilityTimeout(c.cfg.Visibility, vt)
		if err == nil {
			err = q.leases.Configure(lc)
		}
		if err != nil {
			var errs []error
			for _, e := range unjoin(err) {
				errs = append(errs, fmt.Errorf("Visibility.%w", e))
			}
			return attrs, ok, fmt.Errorf("consumer: with the %s visibility timeout (%v, VisibilityTimeout being 0): %w", from, vt, errors.Join(errs...))
		}
		q.vt, q.vtFrom = vt, from
		if q.index == 0 {
			c.cfg.VisibilityTimeout, c.cfg.Visibility = vt, lc
			c.vtFrom = from
			first, firstRead = attrs, ok
		} else if ok {
			c.checkQueue(q, attrs)
		}
	}
	return first, firstRead, nil
}

// queueWarnings lists what in attrs fights cfg (with defaults applied).
func queueWarnings(cfg Config, attrs sqsloop.QueueAttributes) []string {
	var ws []string
	if interval := cfg.Visibility.Interval; !cfg.Visibility.Disabled && attrs.VisibilityTimeout > 0 && interval > attrs.VisibilityTimeout/2 {
		ws = append(ws, fmt.Sprintf("Visibility.Interval (%v) is more than half the queue's visibility timeout (%v); "+
			"the consumer receives with its own VisibilityTimeout (%v), but anything that receives with the queue default will lose leases",
			interval, attrs.VisibilityTimeout, cfg.VisibilityTimeout))
	}
	if cfg.Visibility.Disabled && cfg.ShutdownTimeout > cfg.VisibilityTimeout {
		ws = append(ws, fmt.Sprintf("ShutdownTimeout (%v) exceeds VisibilityTimeout (%v) with extension disabled: "+
			"messages still in flight late in a drain become visible and run twice", cfg.ShutdownTimeout, cfg.VisibilityTimeout))
	}
	if attrs.MaxReceiveCount > 0 && attrs.MaxReceiveCount <= lowMaxReceiveCount {
		ws = append(ws, fmt.Sprintf("the queue's maxReceiveCount (%d) is low; every interrupted delivery (a deploy, a lost lease) "+
			"counts, so a few deploys can push healthy messages into the dead-letter queue %s", attrs.MaxReceiveCount, attrs.DeadLetterQueue))
	}
	return ws
}
