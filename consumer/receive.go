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
	"github.com/sqsloop/sqsloop/internal/rules"
	"github.com/sqsloop/sqsloop/visibility"
)

// Back-off of failed receives: full jitter, doubling from receiveBackoffMin
// up to receiveBackoffMax, reset by a successful receive. Access denied
// backs off from deniedBackoffMin up to deniedBackoffMax instead, to ride
// over an IAM change that is still propagating (visibility.MaxAccessDenied
// denials in a row end Run): that is not a mailbox coming back, and
// trying it every second would use up those denials in seconds.
const (
	receiveBackoffMin = 100 * time.Millisecond
	// receiveBackoffMax is 1 s, so that receiving resumes within a second
	// of the mailbox answering again (a database restarted, an endpoint
	// back); while receives fail, one receive at a time goes out (a
	// probe), so the outage costs at most one call a back-off, not one per
	// receive loop.
	receiveBackoffMax = time.Second
	deniedBackoffMin  = time.Second
	deniedBackoffMax  = 10 * time.Second
)

// maxReceiveGrace bounds how long a receive call in flight when shutdown
// begins may take to come back (its messages are then given back, with the
// unstarted ones) before it is abandoned: an abandoned call's messages stay
// hidden for their visibility timeout, so the grace errs long. It is twice
// the measured round trip of a receive (an answer already on the wire
// arrives within half of one; the rest is room for an answer slower than
// the average, from a loaded server), at least 20 ms, at most 250 ms (and
// 250 ms until a round trip is measured), so that a long poll still
// waiting for messages holds the drain up for at most a quarter of a
// second, not for its full wait.
const maxReceiveGrace = 250 * time.Millisecond

// receiveGrace is the grace a receive in flight gets when shutdown begins.
func (c *Consumer) receiveGrace() time.Duration {
	rtt := c.intake.rtt()
	if rtt == 0 {
		return maxReceiveGrace
	}
	return min(max(2*rtt, 20*time.Millisecond), maxReceiveGrace)
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
// back the messages that wait for a handler (giveBackUnstarted). Pause
// stops the loops the same way, but for the drain: the handlers go on
// with what was received, and Resume starts the loops again.
func (c *Consumer) receive(ctx, handlerCtx context.Context, handlers *pool) (drainBegan time.Time, err error) {
	for {
		paused, began, err := c.receiveUntil(ctx, handlerCtx, handlers)
		if !paused {
			return began, err
		}
		resumed, began, err := c.awaitResume(ctx)
		if !resumed {
			return began, err
		}
	}
}

// receiveUntil runs the receive loops until the drain begins (see
// receive), or until Pause (paused true; at once if paused already).
func (c *Consumer) receiveUntil(ctx, handlerCtx context.Context, handlers *pool) (paused bool, drainBegan time.Time, err error) {
	on, pauseCh := c.pause.state()
	if on {
		return true, time.Time{}, nil
	}
	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	receivers, rctx := errgroup.WithContext(recvCtx)
	callCtx, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	receiversDone := make(chan struct{})
	watchDone := make(chan struct{})
	var leaseErr error
	// paused, drainBegan and leaseErr are set by the watcher; read after
	// watchDone.
	go func() {
		defer close(watchDone)
		select {
		case <-c.drainReq:
		case <-rctx.Done():
		case <-pauseCh:
			paused = true
		case <-c.leases.Failed():
			leaseErr = c.leases.Err()
			c.cfg.Logger.Error("consumer: the lease owner failed for good; draining", slog.Any("error", leaseErr))
		}
		if !paused {
			drainBegan = c.beginDrain() // before anything is given back, so the counts at the end are the drain's
		}
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
	c.onWire.Add(-int64(late.calls)) // their messages held, to be given back
	c.intake.release(len(late.msgs))
	if paused && err != nil { // a loop failed for good as the pause came
		paused, drainBegan = false, c.beginDrain()
	}
	return paused, drainBegan, errors.Join(err, leaseErr)
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
// drain began (calls: how many), to be given back once every receive loop
// has stopped.
type lateReceived struct {
	mu    sync.Mutex
	msgs  []*sqsloop.Message
	calls int
}

func (l *lateReceived) add(msgs []*sqsloop.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, msgs...)
	l.calls++
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
		n, probe, ok := c.gather(recvCtx, token)
		if !ok {
			return nil
		}
		if recvCtx.Err() != nil {
			c.backoff.answered(probe, nil, false)
			c.intake.release(n)
			return nil
		}
		c.st.receiveCalls.Add(1)
		wait := c.cfg.WaitTime
		if probe {
			wait = 0 // a short poll: whether the mailbox answers again, known at once
		}
		began := time.Now()
		c.onWire.Add(1) // until its messages are held (Paused)
		msgs, err := c.mb.Receive(callCtx, sqsloop.ReceiveRequest{
			MaxMessages:           n,
			VisibilityTimeout:     c.cfg.VisibilityTimeout,
			WaitTime:              wait,
			MessageAttributeNames: c.cfg.MessageAttributeNames,
		})
		took := time.Since(began)
		c.intake.received(n, len(msgs), took)
		if c.cfg.Observer != nil {
			c.observeReceive(callCtx, began, took, n, msgs, err)
		}
		// Before its room is given back, so no loop waiting for room sends
		// a receive ahead of the back-off.
		c.backoff.answered(probe, err, recvCtx.Err() == nil)
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
		c.noteReceive(len(msgs), err)
		if err != nil {
			c.onWire.Add(-1)
			c.st.receiveErrors.Add(1)
			if c.receiveFailed(err) {
				return err
			}
			continue
		}
		seqs := c.arrive(handlerCtx, msgs)
		c.onWire.Add(-1) // after their leases are held: Paused counts them all along
		for _, s := range seqs {
			handlers.submit(s)
		}
	}
}

// receiveFailed logs a receive's error and reports whether it ends Run:
// the mailbox is closed, the queue is gone, the request itself is wrong,
// or access was denied visibility.MaxAccessDenied times in a row.
func (c *Consumer) receiveFailed(err error) (fatal bool) {
	switch rules.FaultOf(err) {
	case rules.QueueGone, rules.Invalid:
		fatal = true
	case rules.Denied:
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
// loop), and takes room for the next receive from the intake. probe
// reports that receives are failing and this one is the probe the others
// wait for: its answer must be given to c.backoff.answered.
func (c *Consumer) gather(ctx context.Context, token chan struct{}) (n int, probe, ok bool) {
	select {
	case <-token:
	case <-ctx.Done():
		return 0, false, false
	}
	defer func() { token <- struct{}{} }()
	if !c.backoff.wait(ctx) {
		return 0, false, false
	}
	if n, ok = c.intake.gather(ctx); !ok {
		return 0, false, false
	}
	// A receive may have failed while this one waited for room, or just
	// now: send says so.
	for {
		if !c.backoff.wait(ctx) {
			c.intake.release(n)
			return 0, false, false
		}
		if probe, ok := c.backoff.send(); ok {
			return n, probe, true
		}
	}
}

// receiveBackoff spaces out receives after failures, for every receive
// loop at once: full jitter, doubling from receiveBackoffMin up to
// receiveBackoffMax (from deniedBackoffMin up to deniedBackoffMax when
// access is denied), reset by a successful receive. While receives fail,
// one receive at a time goes out when the back-off ends (the probe, a
// short poll: WaitTime 0, so that it answers at once, and Ready with it);
// the other loops wait for its answer, and the first success lets every
// loop go at once. Safe for concurrent use.
type receiveBackoff struct {
	mu      sync.Mutex
	next    time.Duration // the next failure's ceiling; 0 while receives succeed
	until   time.Time     // no receive before this
	probing chan struct{} // while a probe is on the wire: closed when it is answered
}

// wait waits until a receive may go out: the back-off has ended and no
// probe is on the wire. It returns false when ctx is done first.
func (b *receiveBackoff) wait(ctx context.Context) bool {
	for {
		b.mu.Lock()
		probing, d := b.probing, time.Until(b.until)
		b.mu.Unlock()
		switch {
		case probing != nil:
			select {
			case <-probing:
			case <-ctx.Done():
				return false
			}
		case d > 0:
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return false
			}
		default:
			return ctx.Err() == nil
		}
	}
}

// send records that a receive goes out now, after wait, with the gathering
// token held (so one probe at a time), and reports whether it is a probe:
// receives are failing. ok is false when a failure was recorded since
// wait returned: wait again.
func (b *receiveBackoff) send() (probe, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.next == 0:
		return false, true
	case b.probing != nil || time.Now().Before(b.until):
		return false, false
	}
	b.probing = make(chan struct{})
	return true, true
}

// answered records a receive's outcome (unless record is false: the drain
// began meanwhile) and, for a probe, lets the waiting loops go.
func (b *receiveBackoff) answered(probe bool, err error, record bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !record:
	case err == nil:
		b.next = 0
	default:
		lo, hi := receiveBackoffMin, receiveBackoffMax
		if rules.FaultOf(err) == rules.Denied {
			lo, hi = deniedBackoffMin, deniedBackoffMax
		}
		b.next = min(max(b.next, lo), hi)
		b.until = time.Now().Add(max(rand.N(b.next), time.Millisecond))
		b.next = min(2*b.next, hi)
	}
	if probe && b.probing != nil {
		close(b.probing)
		b.probing = nil
	}
}

// giveBack hands msgs, received but never to be started, to the lease
// owner to be made visible again at once.
func (c *Consumer) giveBack(msgs []*sqsloop.Message) {
	for _, m := range msgs {
		c.leases.Hold(m, nil, nil).GiveBack()
	}
}
