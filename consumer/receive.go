package consumer

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
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

// maxReceiveGrace bounds how long a receive call in flight when shutdown
// begins may take to come back (its messages are then given back, with the
// unstarted ones) before it is abandoned: an abandoned call's messages stay hidden for
// their visibility timeout. The grace is the measured round trip of a
// receive (an answer already on the wire arrives within half of it), at
// least 10 ms, at most 100 ms (and 100 ms until a round trip is measured),
// so a drain is not held up for a long poll's full wait.
const maxReceiveGrace = 100 * time.Millisecond

// receiveGrace is the grace a receive in flight gets when shutdown begins.
func (c *Consumer) receiveGrace() time.Duration {
	rtt := c.intake.rtt()
	if rtt == 0 {
		return maxReceiveGrace
	}
	return min(max(rtt, 10*time.Millisecond), maxReceiveGrace)
}

// maxReceivers bounds the receive calls a consumer has in flight at once:
// 32, enough to fill a 10 ms round trip at 30,000 messages a second.
const maxReceivers = 32

// receive runs the receive loops until the drain begins: ctx done,
// Shutdown called, a loop failing for good, or the lease owner giving up
// (its error is returned). It returns once every loop has stopped, with
// the moment the drain began. Receive calls in flight then get
// c.receiveGrace() to come back, so that messages SQS already handed out are
// given back rather than left hidden for their visibility timeout; what
// they bring is given back once they all have, and the caller then gives
// back the messages that wait for a handler (giveBackUnstarted).
func (c *Consumer) receive(ctx, handlerCtx context.Context, handlers *pool) (drainBegan time.Time, err error) {
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
		c.drainStarted(drainBegan) // before anything is given back, so the counts at the end are the drain's
		stopRecv()
		// Nothing is given back before the receives in flight have come
		// back: a message given back while one of them still waits in its
		// long poll would be received by it again, one more receive count
		// towards the queue's maxReceiveCount for nothing.
		grace := time.NewTimer(c.receiveGrace())
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
	var late lateReceived
	for range c.receivers() {
		receivers.Go(func() error { return c.receiveLoop(rctx, callCtx, handlerCtx, token, handlers, &late) })
	}
	err = receivers.Wait()
	close(receiversDone)
	stopRecv()
	<-watchDone
	c.giveBack(late.msgs)
	c.intake.release(len(late.msgs))
	return drainBegan, errors.Join(err, leaseErr)
}

// receivers is how many receive loops run: maxReceivers, so that the
// receive-ahead can keep that many receives on the wire (the intake decides
// how many actually are: one loop gathers at a time, and only when there is
// room), and one when a single handler slot leaves nothing to overlap.
func (c *Consumer) receivers() int {
	if c.cfg.Concurrency == 1 {
		return 1
	}
	return maxReceivers
}

// lateReceived collects the messages of receives that came back after the
// drain began, to be given back once every receive loop has stopped.
type lateReceived struct {
	mu   sync.Mutex
	msgs []*sqsloop.Message
}

func (l *lateReceived) add(msgs []*sqsloop.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, msgs...)
}

// receiveLoop receives while recvCtx lives, making its calls with callCtx,
// and hands each message (each sequence of one message group on a FIFO
// queue), its lease held, to the handler pool, whose handlers run with
// handlerCtx. It asks for no more than the intake allows: the free handler
// slots plus the receive-ahead depth. What a receive brings after the drain
// began goes to late, to be given back when every loop has stopped. It
// returns nil when recvCtx is done, or the mailbox's error when it failed
// for good.
func (c *Consumer) receiveLoop(recvCtx, callCtx, handlerCtx context.Context, token chan struct{}, handlers *pool, late *lateReceived) error {
	for {
		select {
		case <-c.drainReq:
			return nil
		default:
		}
		n, ok := c.gather(recvCtx, token)
		if !ok {
			return nil
		}
		if recvCtx.Err() != nil {
			c.intake.release(n)
			return nil
		}
		c.st.receiveCalls.Add(1)
		began := time.Now()
		msgs, err := c.mb.Receive(callCtx, sqsloop.ReceiveRequest{
			MaxMessages:           n,
			VisibilityTimeout:     c.cfg.VisibilityTimeout,
			WaitTime:              c.cfg.WaitTime,
			MessageAttributeNames: c.cfg.MessageAttributeNames,
		})
		took := time.Since(began)
		c.intake.received(n, len(msgs), took)
		if c.cfg.Observer != nil {
			c.observeReceive(callCtx, began, took, n, msgs, err)
		}
		if err != nil && recvCtx.Err() == nil {
			// Before its room is given back, so no loop waiting for room
			// sends a receive ahead of the back-off.
			c.backoff.failed(errors.Is(err, sqsloop.ErrAccessDenied))
		}
		if len(msgs) > n {
			c.cfg.Logger.Error("consumer: the mailbox returned more messages than asked for; giving back the extra",
				slog.Int("asked", n), slog.Int("got", len(msgs)))
			c.giveBack(msgs[n:])
			msgs = msgs[:n]
		}
		c.intake.release(n - len(msgs))
		if len(msgs) > 0 {
			c.st.received.Add(int64(len(msgs)))
			for _, m := range msgs {
				if m.ReceiveCount > 1 {
					c.st.redelivered.Add(1)
				}
			}
		}
		if recvCtx.Err() != nil {
			// Shutdown began while these were on their way: given back
			// when no receive is left waiting (receive).
			late.add(msgs)
			return nil
		}
		c.health.received(err)
		if err != nil {
			c.st.receiveErrors.Add(1)
			if c.receiveFailed(err) {
				return err
			}
			continue
		}
		c.backoff.succeeded()
		for _, s := range c.arrive(handlerCtx, msgs) {
			handlers.submit(s)
		}
	}
}

// receiveFailed logs a receive's error and reports whether it ends Run:
// the mailbox is closed, the queue is gone, the request itself is wrong,
// or access was denied visibility.MaxAccessDenied times in a row.
func (c *Consumer) receiveFailed(err error) (fatal bool) {
	switch {
	case errors.Is(err, sqsloop.ErrMailboxClosed), errors.Is(err, sqsloop.ErrQueueNotFound), errors.Is(err, sqsloop.ErrInvalidArgument):
		fatal = true
	case errors.Is(err, sqsloop.ErrAccessDenied):
		fatal = c.health.deniedInARow() >= visibility.MaxAccessDenied
	}
	if fatal {
		c.cfg.Logger.Error("consumer: receive failed for good; draining", slog.Any("error", err))
		return true
	}
	c.cfg.Logger.Warn("consumer: receive failed; backing off", slog.Any("error", err))
	return false
}

// gather takes the gathering token (one receive loop gathers at a time),
// waits out the back-off of failed receives (so a failure holds back every
// loop), and takes room for the next receive from the intake.
func (c *Consumer) gather(ctx context.Context, token chan struct{}) (n int, ok bool) {
	select {
	case <-token:
	case <-ctx.Done():
		return 0, false
	}
	defer func() { token <- struct{}{} }()
	if !c.backoff.wait(ctx) {
		return 0, false
	}
	if n, ok = c.intake.gather(ctx); !ok {
		return 0, false
	}
	// A receive may have failed while this one waited for room.
	if !c.backoff.wait(ctx) {
		c.intake.release(n)
		return 0, false
	}
	return n, true
}

// receiveBackoff spaces out receives after failures, for every receive
// loop at once: full jitter, doubling from receiveBackoffMin
// (deniedBackoffMin when access is denied) up to receiveBackoffMax, reset
// by a successful receive. Safe for concurrent use.
type receiveBackoff struct {
	mu    sync.Mutex
	next  time.Duration // the next failure's ceiling; 0 before any
	until time.Time     // no receive before this
}

// wait waits until receives may go on, or ctx is done (false).
func (b *receiveBackoff) wait(ctx context.Context) bool {
	b.mu.Lock()
	d := time.Until(b.until)
	b.mu.Unlock()
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// failed records a failed receive.
func (b *receiveBackoff) failed(denied bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next = max(b.next, receiveBackoffMin)
	if denied {
		b.next = max(b.next, deniedBackoffMin)
	}
	b.until = time.Now().Add(rand.N(b.next) + time.Millisecond)
	b.next = min(2*b.next, receiveBackoffMax)
}

// succeeded records a successful receive.
func (b *receiveBackoff) succeeded() {
	b.mu.Lock()
	b.next = 0
	b.mu.Unlock()
}

// giveBack hands msgs, received but never to be started, to the lease
// owner to be made visible again at once.
func (c *Consumer) giveBack(msgs []*sqsloop.Message) {
	for _, m := range msgs {
		c.leases.Hold(m, nil, nil).GiveBack()
	}
}
