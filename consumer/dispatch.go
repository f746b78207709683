package consumer

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// Back-off of failed receives: full jitter, doubling from receiveBackoffMin
// up to receiveBackoffMax, reset by a successful receive.
const (
	receiveBackoffMin = 100 * time.Millisecond
	receiveBackoffMax = 10 * time.Second
)

// drainNackTimeout bounds the call that gives back unstarted messages.
const drainNackTimeout = 5 * time.Second

// receiveLoop receives while recvCtx lives and hands each message (each
// run of one message group on a FIFO queue) to the handler pool. It returns nil when recvCtx is done,
// or the mailbox's error when it failed for good.
func (c *Consumer) receiveLoop(recvCtx, handlerCtx context.Context, slots *semaphore.Weighted, handlers *pool) error {
	backoff := receiveBackoffMin
	for {
		select {
		case <-c.drainReq:
			return nil
		default:
		}
		// Never receive more than can start at once.
		if err := slots.Acquire(recvCtx, 1); err != nil {
			return nil
		}
		n := 1
		for n < c.cfg.MaxMessages && slots.TryAcquire(1) {
			n++
		}
		c.st.receiveCalls.Add(1)
		msgs, err := c.mb.Receive(recvCtx, sqsloop.ReceiveRequest{
			MaxMessages:       n,
			VisibilityTimeout: c.cfg.VisibilityTimeout,
			WaitTime:          c.cfg.WaitTime,
		})
		slots.Release(int64(n - len(msgs)))
		if len(msgs) > 0 {
			c.st.received.Add(int64(len(msgs)))
			for _, m := range msgs {
				if m.ReceiveCount > 1 {
					c.st.redelivered.Add(1)
				}
			}
		}
		if recvCtx.Err() != nil {
			// Shutdown began while these were on their way: give them back.
			c.nackUnstarted(handlerCtx, msgs)
			slots.Release(int64(len(msgs)))
			return nil
		}
		if err != nil {
			c.st.receiveErrors.Add(1)
			if fatal(err) {
				c.cfg.Logger.Error("consumer: receive failed for good; draining", slog.Any("error", err))
				return err
			}
			c.cfg.Logger.Warn("consumer: receive failed; backing off", slog.Any("error", err))
			if !sleep(recvCtx, rand.N(backoff)+time.Millisecond) {
				return nil
			}
			backoff = min(2*backoff, receiveBackoffMax)
			continue
		}
		backoff = receiveBackoffMin
		for _, run := range groupRuns(msgs) {
			handlers.submit(run)
		}
	}
}

// fatal reports whether a receive error ends Run: the mailbox is closed,
// the queue is gone, or the request itself is wrong.
func fatal(err error) bool {
	return errors.Is(err, sqsloop.ErrMailboxClosed) || errors.Is(err, sqsloop.ErrQueueNotFound) ||
		errors.Is(err, sqsloop.ErrInvalidArgument)
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// nackUnstarted makes msgs visible again at once, in batch calls.
func (c *Consumer) nackUnstarted(ctx context.Context, msgs []*sqsloop.Message) {
	if len(msgs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, drainNackTimeout)
	defer cancel()
	changes := make([]sqsloop.VisibilityChange, len(msgs))
	for i, m := range msgs {
		changes[i] = sqsloop.VisibilityChange{ReceiptHandle: m.ReceiptHandle}
	}
	errs, err := c.mb.ChangeVisibility(ctx, changes)
	for i, m := range msgs {
		e := err
		if e == nil && i < len(errs) {
			e = errs[i]
		}
		if e != nil {
			c.st.nackFailed.Add(1)
			c.cfg.Logger.Warn("consumer: could not give back an unstarted message; it becomes visible when its lease ends",
				slog.String("message_id", m.ID), slog.Any("error", e))
			continue
		}
		c.st.drainNacked.Add(1)
	}
}

// groupRuns splits msgs into runs to process in order: one per message group
// on a FIFO queue (SQS keeps order within a group), one per message
// otherwise.
func groupRuns(msgs []*sqsloop.Message) [][]*sqsloop.Message {
	runs := make([][]*sqsloop.Message, 0, len(msgs))
	index := map[string]int{}
	for _, m := range msgs {
		if m.MessageGroupID == "" {
			runs = append(runs, []*sqsloop.Message{m})
			continue
		}
		if i, ok := index[m.MessageGroupID]; ok {
			runs[i] = append(runs[i], m)
			continue
		}
		index[m.MessageGroupID] = len(runs)
		runs = append(runs, []*sqsloop.Message{m})
	}
	return runs
}

// process handles a run of messages in order. All of them share one
// heartbeat and keep their leases while the run progresses; if one fails,
// the rest of its group is given back unprocessed so order holds.
func (c *Consumer) process(ctx context.Context, run []*sqsloop.Message, set *settler) {
	hb := heartbeat.New()
	hctx, cancel := context.WithCancelCause(heartbeat.NewContext(ctx, hb))
	defer cancel(nil)
	leases := make([]*leaseOf, len(run))
	for i, m := range run {
		leases[i] = &leaseOf{m: m, l: c.ext.Attach(m, hb, cancel)}
	}
	failed := false
	for _, lo := range leases {
		if failed || ctx.Err() != nil {
			// An earlier message of the group failed, or the drain budget ran
			// out before this one started: give it back untouched.
			c.ext.Detach(lo.l)
			set.nack(lo.m, 0)
			continue
		}
		c.st.started.Add(1)
		err := c.handler(hctx, lo.m)
		lost := c.ext.Detach(lo.l)
		if err == nil {
			c.st.succeeded.Add(1)
			set.ack(lo.m)
			continue
		}
		failed = true
		c.st.failed.Add(1)
		var pe *PanicError
		if errors.As(err, &pe) {
			c.st.panics.Add(1)
		}
		if lost != nil {
			// The lease is gone and the message visible or redelivered
			// already: a nack has nothing left to give back.
			continue
		}
		delay := nackDelay(err)
		if errors.Is(context.Cause(hctx), ErrDrainTimeout) {
			delay = 0 // interrupted by the drain, not failed: give it back at once
		}
		c.cfg.Logger.Debug("consumer: handler failed; nacking", slog.String("message_id", lo.m.ID),
			slog.Duration("delay", delay), slog.Any("error", err))
		set.nack(lo.m, delay)
	}
}

type leaseOf struct {
	m *sqsloop.Message
	l *visibility.Lease
}
