package consumer

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

// Back-off of failed receives: full jitter, doubling from receiveBackoffMin
// (deniedBackoffMin when access is denied, to ride over an IAM change that
// is still propagating) up to receiveBackoffMax, reset by a successful
// receive.
const (
	receiveBackoffMin = 100 * time.Millisecond
	deniedBackoffMin  = time.Second
	receiveBackoffMax = 10 * time.Second
)

// receiveGrace is how long a receive call in flight when shutdown begins may
// take to come back (its messages are then given back at once) before it is
// abandoned: an abandoned call's messages stay hidden for their visibility
// timeout. 100 ms covers an answer already on the wire from an in-region
// SQS endpoint without holding every drain up for a long poll's full wait.
const receiveGrace = 100 * time.Millisecond

// maxReceivers bounds the receive calls a consumer has in flight at once.
const maxReceivers = 16

// receive runs the receive loops until the drain begins: ctx done,
// Shutdown called, a loop failing for good, or the lease owner giving up
// (its error is returned). It returns once every loop has stopped, with
// the moment the drain began. Receive calls in flight then get
// receiveGrace to come back, so that messages SQS already handed out are
// given back rather than left hidden for their visibility timeout.
func (c *Consumer) receive(ctx, handlerCtx context.Context, free slots, handlers *pool) (drainBegan time.Time, err error) {
	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	receivers, rctx := errgroup.WithContext(recvCtx)
	callCtx, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	receiversDone := make(chan struct{})
	watchDone := make(chan struct{})
	var leaseErr error
	// drainBegan and leaseErr are set by the watcher; read after watchDone.
	go func() {
		defer close(watchDone)
		select {
		case <-c.drainReq:
		case <-rctx.Done():
		case <-c.leases.Failed():
			leaseErr = c.leases.Err()
			c.cfg.Logger.Error("consumer: the lease owner failed for good; draining", slog.Any("error", leaseErr))
		}
		c.state.CompareAndSwap(stateRunning, stateDraining) // Ready() reports it at once
		drainBegan = time.Now()
		c.drainStarted() // before anything is given back, so the counts at the end are the drain's
		stopRecv()
		c.giveBackWaiting()
		grace := time.NewTimer(receiveGrace)
		defer grace.Stop()
		select {
		case <-grace.C:
			cancelCalls()
		case <-receiversDone:
		}
	}()
	// Several receives in flight: a receive holds its slots for a round
	// trip, so the next one gathers while it is on the wire.
	token := make(chan struct{}, 1)
	token <- struct{}{}
	for range c.receivers() {
		receivers.Go(func() error { return c.receiveLoop(rctx, callCtx, free, token, handlers) })
	}
	err = receivers.Wait()
	close(receiversDone)
	stopRecv()
	<-watchDone
	return drainBegan, errors.Join(err, leaseErr)
}

// receivers is how many receive loops run: one per full batch (10) of
// handler slots, plus one to gather the next batch while
// the others' receives are on the wire; at most maxReceivers, and one when
// a single handler slot leaves nothing to overlap. Each asks for full
// batches, so requests per message stay at their floor.
func (c *Consumer) receivers() int {
	if c.cfg.Concurrency == 1 {
		return 1
	}
	return min(c.cfg.Concurrency/sqsloop.MaxBatchSize+1, maxReceivers)
}

// receiveLoop receives while recvCtx lives, making its calls with callCtx,
// and hands each message (each sequence of one message group on a FIFO
// queue) to the handler pool. It returns nil when recvCtx is done, or the
// mailbox's error when it failed for good.
func (c *Consumer) receiveLoop(recvCtx, callCtx context.Context, free slots, token chan struct{}, handlers *pool) error {
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
			c.giveBack(msgs[n:])
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
			c.giveBack(msgs)
			free.release(len(msgs))
			return nil
		}
		c.health.received(err)
		if err != nil {
			c.st.receiveErrors.Add(1)
			if fatal, denied := c.receiveFailed(err); fatal {
				return err
			} else if denied {
				backoff = max(backoff, deniedBackoffMin)
			}
			if !sleep(recvCtx, rand.N(backoff)+time.Millisecond) {
				return nil
			}
			backoff = min(2*backoff, receiveBackoffMax)
			continue
		}
		backoff = receiveBackoffMin
		for _, s := range sequences(msgs) {
			handlers.submit(s)
		}
	}
}

// receiveFailed logs a receive's error and reports whether it ends Run:
// the mailbox is closed, the queue is gone, the request itself is wrong,
// or access was denied visibility.MaxAccessDenied times in a row. denied
// reports an access-denied error that does not end Run yet.
func (c *Consumer) receiveFailed(err error) (fatal, denied bool) {
	switch {
	case errors.Is(err, sqsloop.ErrMailboxClosed), errors.Is(err, sqsloop.ErrQueueNotFound), errors.Is(err, sqsloop.ErrInvalidArgument):
		fatal = true
	case errors.Is(err, sqsloop.ErrAccessDenied):
		denied = true
		fatal = c.health.deniedInARow() >= visibility.MaxAccessDenied
	}
	if fatal {
		c.cfg.Logger.Error("consumer: receive failed for good; draining", slog.Any("error", err))
		return true, false
	}
	c.cfg.Logger.Warn("consumer: receive failed; backing off", slog.Any("error", err))
	return false, denied
}

// gatherWindow is how long the receive loop waits for busy handler slots to
// free up so that one receive can ask for a full batch: receives of one or
// two messages cost as many requests as receives of ten.
const gatherWindow = 10 * time.Millisecond

// gather takes one free handler slot, waiting for it, then up to 10
// (SQS's MaxNumberOfMessages) in all, waiting at most gatherWindow for busy ones to free
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
	want := min(sqsloop.MaxBatchSize, c.cfg.Concurrency)
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

// giveBack hands msgs, received but never to be started, to the lease
// owner to be made visible again at once.
func (c *Consumer) giveBack(msgs []*sqsloop.Message) {
	for _, m := range msgs {
		c.leases.Hold(m, nil, nil).GiveBack()
	}
}
