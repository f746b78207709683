package consumer

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

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

// receiveLoop receives while recvCtx lives, making its calls with callCtx,
// and hands each message (each run of one message group on a FIFO queue) to
// the handler pool. It returns nil when recvCtx is done,
// or the mailbox's error when it failed for good.
func (c *Consumer) receiveLoop(recvCtx, callCtx, handlerCtx context.Context, free slots, token chan struct{}, handlers *pool) error {
	backoff := receiveBackoffMin
	for {
		select {
		case <-c.drainReq:
			return nil
		default:
		}
		// Never receive more than can start at once.
		n, ok := c.gather(recvCtx, free, token)
		if !ok {
			return nil
		}
		if recvCtx.Err() != nil {
			free.release(n)
			return nil
		}
		c.st.receiveCalls.Add(1)
		msgs, err := c.mb.Receive(callCtx, sqsloop.ReceiveRequest{
			MaxMessages:       n,
			VisibilityTimeout: c.cfg.VisibilityTimeout,
			WaitTime:          c.cfg.WaitTime,
		})
		if len(msgs) > n {
			c.cfg.Logger.Error("consumer: the mailbox returned more messages than asked for; giving back the extra",
				slog.Int("asked", n), slog.Int("got", len(msgs)))
			c.nackUnstarted(context.WithoutCancel(handlerCtx), msgs[n:])
			msgs = msgs[:n]
		}
		free.release(n - len(msgs))
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
			c.nackUnstarted(context.WithoutCancel(handlerCtx), msgs)
			free.release(len(msgs))
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
		for _, r := range groupRuns(msgs) {
			handlers.submit(r)
		}
	}
}

// gatherWindow is how long the receive loop waits for busy handler slots to
// free up so that one receive can ask for a full batch: receives of one or
// two messages cost as many requests as receives of ten.
const gatherWindow = 10 * time.Millisecond

// gather takes one free handler slot, waiting for it, then up to
// MaxMessages in all, waiting at most gatherWindow for busy ones to free
// up. One receive loop gathers at a time (it holds the gathering token), so
// concurrent loops never split the slots between them and wait on each
// other; while one loop's receive is on the wire, the next gathers. It
// returns how many slots it holds; ok is false when ctx ended first.
func (c *Consumer) gather(ctx context.Context, free slots, token chan struct{}) (n int, ok bool) {
	select {
	case <-token:
	case <-ctx.Done():
		return 0, false
	}
	defer func() { token <- struct{}{} }()
	if !free.acquire(ctx) {
		return 0, false
	}
	n = 1
	want := min(c.cfg.MaxMessages, c.cfg.Concurrency)
	for n < want && free.tryAcquire() {
		n++
	}
	if n == want {
		return n, true
	}
	t := time.NewTimer(gatherWindow)
	defer t.Stop()
	for n < want {
		select {
		case <-free:
			n++
		case <-t.C:
			return n, true
		case <-ctx.Done():
			return n, true // the caller sees ctx and gives the slots back
		}
	}
	return n, true
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
		if e := entryError(errs, err, i); e != nil {
			c.st.nackFailed.Add(1)
			c.cfg.Logger.Warn("consumer: could not give back an unstarted message; it becomes visible when its lease ends",
				slog.String("message_id", m.ID), slog.Any("error", e))
			continue
		}
		c.st.drainNacked.Add(1)
	}
}

// process handles r's messages in order. They share one heartbeat: the
// running handler's beats, and each message finished, keep the waiting ones
// alive. If one fails, the rest of its group is given back unprocessed so
// that order holds; a waiting message whose lease was lost is left to its
// redelivery.
func (c *Consumer) process(ctx context.Context, r *run, set *settler) {
	hb := heartbeat.New()
	hctx := heartbeat.NewContext(ctx, hb)
	r.leases = make([]*visibility.Lease, 0, len(r.msgs))
	var cancels []context.CancelCauseFunc
	var ctxs []context.Context
	for _, m := range r.msgs {
		var cancel context.CancelCauseFunc
		if c.cfg.Visibility.CancelOnLeaseLost {
			var mctx context.Context
			mctx, cancel = context.WithCancelCause(hctx)
			ctxs, cancels = append(ctxs, mctx), append(cancels, cancel)
		}
		r.leases = append(r.leases, c.ext.Attach(m, hb, cancel))
	}
	defer func() {
		for _, cancel := range cancels {
			cancel(nil)
		}
	}()
	if len(r.msgs) > 1 {
		c.waiting.add(r)
		defer c.waiting.remove(r)
	}
	for {
		i, ok := r.take()
		if !ok {
			return
		}
		m, lease := r.msgs[i], r.leases[i]
		if i > 0 && c.ext.Err(lease) != nil {
			c.ext.Detach(lease) // lapsed while waiting: it is being redelivered
			continue
		}
		if ctx.Err() != nil {
			// The drain budget ran out before this one started.
			c.ext.Detach(lease)
			set.nack(m, 0)
			continue
		}
		mctx := hctx
		if ctxs != nil {
			mctx = ctxs[i]
		}
		c.st.started.Add(1)
		err := c.handler(mctx, m)
		hb.Beat() // a finished message is progress for the ones waiting
		lost := c.ext.Detach(lease)
		if err == nil {
			c.st.succeeded.Add(1)
			set.ack(m)
			continue
		}
		c.failed(mctx, m, err, lost, set)
		if first, end := r.rest(); first < end {
			c.giveBack(r, first, end, set)
		}
	}
}

// failed accounts for a handler's error and nacks m with its delay.
func (c *Consumer) failed(ctx context.Context, m *sqsloop.Message, err, lost error, set *settler) {
	c.st.failed.Add(1)
	var pe *PanicError
	if errors.As(err, &pe) {
		c.st.panics.Add(1)
	}
	if lost != nil {
		// The lease is gone and the message visible or redelivered
		// already: a nack has nothing left to give back.
		return
	}
	delay := nackDelay(err)
	if errors.Is(context.Cause(ctx), ErrDrainTimeout) {
		delay = 0 // interrupted by the drain, not failed: give it back at once
	}
	c.cfg.Logger.Debug("consumer: handler failed; nacking", slog.String("message_id", m.ID),
		slog.Duration("delay", delay), slog.Any("error", err))
	set.nack(m, delay)
}

// giveBack detaches r's messages first..end-1, not started, and nacks them
// at once, keeping their group's order for the next receiver.
func (c *Consumer) giveBack(r *run, first, end int, set *settler) {
	for i := first; i < end; i++ {
		if c.ext.Detach(r.leases[i]) == nil {
			set.nack(r.msgs[i], 0)
		}
	}
}
