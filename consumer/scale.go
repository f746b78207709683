package consumer

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"time"

	"github.com/sqsloop/sqsloop"
)

// watchQueue checks the queue's attributes against the configuration
// (warnQueue): those read at start-up (read), or, unless a read was tried
// there (tried), its own. Then, with an Observer and a mailbox that is an
// sqsloop.AttributesReader, it reports the live signals: the start-up
// read's at once (also when it failed, if it was its own), and a read
// every Config.QueueReadInterval after, until ctx is done.
func (c *Consumer) watchQueue(ctx context.Context, attrs sqsloop.QueueAttributes, read, tried bool) {
	began := time.Now()
	var err error
	if !tried {
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
	w := queueWatch{c: c, warned: !read} // a failed start-up read was logged
	if read || err != nil {
		w.report(ctx, began, attrs, err)
	}
	t := time.NewTicker(c.cfg.QueueReadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.read(ctx)
	}
}

// queueWatch reads the queue's counts and its dead-letter queue's for the
// live signals, one GetQueueAttributes call per queue per read. A failed
// read is logged at WARN, once until a read of that queue succeeds again.
type queueWatch struct {
	c                 *Consumer
	warned, dlqWarned bool
}

// read reads the queue's counts and reports them, unless ctx was
// cancelled (shutdown began).
func (w *queueWatch) read(ctx context.Context) {
	began := time.Now()
	attrs, ok, err := w.c.readQueue(ctx)
	switch {
	case ok:
		w.warned = false
	case err == nil:
		return // shutdown began
	case !w.warned:
		w.c.warnUnread(err)
		w.warned = true
	}
	w.report(ctx, began, attrs, err)
}

// report reads the dead-letter queue's counts, when the queue has one
// (attrs names it), and reports attrs (the read that began at began, or
// its error) and them to the Observer, with the scaling signal.
func (w *queueWatch) report(ctx context.Context, began time.Time, attrs sqsloop.QueueAttributes, err error) {
	c := w.c
	e := sqsloop.QueueEvent{Start: began, Err: err}
	if err == nil {
		e.Backlog, e.InFlight, e.Delayed = attrs.ApproximateMessages, attrs.ApproximateMessagesInFlight, attrs.ApproximateMessagesDelayed
		e.BacklogPerConsumer, e.RecommendedConsumers = scaleOf(attrs, c.leases.Held(), c.cfg.Concurrency, c.intake.runTime(), c.cfg.LatencyTarget)
		if attrs.DeadLetterQueue != "" {
			e.DeadLetters, e.DeadLettersRead = w.readDeadLetters(ctx)
		}
	}
	e.Duration = time.Since(began)
	c.cfg.Observer.QueueRead(e)
}

// readDeadLetters reads the visible messages of the dead-letter queue
// (opened once, at the first read, and shared with the poison copies),
// and reports whether it did.
func (w *queueWatch) readDeadLetters(ctx context.Context) (int, bool) {
	ctx, cancel := context.WithTimeout(ctx, queueCheckTimeout)
	defer cancel()
	dlq, err := w.c.dead.Open(ctx)
	var attrs sqsloop.QueueAttributes
	if err == nil {
		if r, ok := dlq.(sqsloop.AttributesReader); ok {
			attrs, err = r.QueueAttributes(ctx)
		} else {
			return 0, false // no counts to read: nothing to warn about
		}
	}
	switch {
	case err == nil:
		w.dlqWarned = false
		return attrs.ApproximateMessages, true
	case errors.Is(ctx.Err(), context.Canceled):
	case !w.dlqWarned:
		w.c.cfg.Logger.Warn("consumer: could not read the dead-letter queue's counts", slog.Any("error", err))
		w.dlqWarned = true
	}
	return 0, false
}

// scaleOf is the scaling signal (see the package doc) of a queue with
// attrs' counts, for a consumer holding held leases, running up to slots
// handlers whose run takes took (0: not measured yet), with latency target
// target (0: none): the backlog per consumer and the consumers
// recommended, at least 1.
func scaleOf(attrs sqsloop.QueueAttributes, held, slots int, took, target time.Duration) (perConsumer float64, recommended int) {
	backlog, inFlight := float64(attrs.ApproximateMessages), float64(attrs.ApproximateMessagesInFlight)
	per := float64(held)
	if held == 0 {
		per = float64(slots)
	}
	consumers := max(1, math.Round(inFlight/per))
	share := 1.0 // a handler slot per message: KEDA's aws-sqs-queue rule, queueLength = slots
	if target > 0 && took > 0 {
		share = took.Seconds() / target.Seconds()
	}
	busy := inFlight + backlog*share
	return backlog / consumers, max(1, int(math.Ceil(busy/float64(slots))))
}
