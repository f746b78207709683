package memmailbox

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Receive returns up to req.MaxMessages (1–10) visible messages, each now in
// flight for req.VisibilityTimeout (0–12 h) with a fresh receipt handle for
// q's Delete and ChangeVisibility. Like SQS it counts whole seconds: both
// durations are rounded up with sqsloop.WholeSeconds (a 1.5 s visibility
// timeout hides the message 2 s, and Message.VisibilityTimeout says 2 s). The
// visibility timeout is always the request's: 0 means visible again at once,
// as in SQS; the queue's default applies only through QueueAttributes.
//
// When nothing is visible it long-polls up to req.WaitTime (0–20 s),
// returning as soon as a message turns visible (sent, nacked, or at the end
// of a delay or of a visibility timeout); after WaitTime it returns an empty
// slice and a nil error. A message already received MaxReceiveCount times is
// moved to the DLQ instead of being delivered (redrive), and takes no place
// in the batch. A standard queue delivers its messages in the order they
// became visible, then in the order sent. On a FIFO queue, a message group
// with a message in flight delivers nothing else, and a receive takes as
// many messages of one group as it can, in order, before another group,
// the group whose next message was sent first.
//
// Each message carries the message attributes req.MessageAttributeNames
// selects, as SQS does: nil (or a name "All" or ".*") all of them, an empty
// slice none, a name ending in ".*" those with that prefix, any other name
// that attribute. Its system attributes are ApproximateReceiveCount,
// SentTimestamp and ApproximateFirstReceiveTimestamp; MessageGroupId when it
// was sent with one; MessageDeduplicationId and SequenceNumber on a FIFO
// queue.
//
// Errors: req.Validate's error, unchanged, for a request out of range
// (wrapping sqsloop.ErrInvalidArgument, naming every bad field);
// sqsloop.ErrQueueNotFound, sqsloop.ErrMailboxClosed
// (also returned at once to a waiting Receive when q or the broker is
// closed); ctx's error, with no message taken, when ctx is done first. Safe
// for concurrent use; a message goes to one receiver at a time. Returned
// messages share nothing with the queue.
func (q *Queue) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	s, err := q.state()
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	req.VisibilityTimeout = sqsloop.WholeSeconds(req.VisibilityTimeout)
	req.WaitTime = sqsloop.WholeSeconds(req.WaitTime)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(req.WaitTime)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	waiting := false // registered in s.waiters
	for {
		if err := ctx.Err(); err != nil { // done while woken: take nothing
			if waiting {
				s.leave()
			}
			return nil, err
		}
		if err := q.lock(s); err != nil {
			if waiting {
				s.leave()
			}
			return nil, err
		}
		if waiting {
			s.waiters--
			waiting = false
		}
		now := time.Now()
		s.sweep(now)
		msgs, dead := s.take(q, req, now)
		if len(msgs) > 0 || !now.Before(deadline) {
			s.mu.Unlock()
			s.moveToDLQ(dead)
			return msgs, nil
		}
		wait := deadline.Sub(now)
		if next, ok := s.nextDue(); ok && next.Sub(now) < wait {
			wait = next.Sub(now)
		}
		wake := s.wake
		s.waiters++
		waiting = true
		s.mu.Unlock()
		s.moveToDLQ(dead)

		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			s.leave()
			return nil, ctx.Err()
		case <-q.done:
			s.leave()
			return nil, q.errClosed()
		case <-s.done:
			s.leave()
			return nil, q.errClosed()
		}
	}
}

// leave unregisters a long poll that stops waiting.
func (s *queueState) leave() {
	s.mu.Lock()
	s.waiters--
	s.mu.Unlock()
}

// take puts up to req.MaxMessages receivable messages in flight and returns
// them, with the records to move to the DLQ. s.mu is held.
func (s *queueState) take(q *Queue, req sqsloop.ReceiveRequest, now time.Time) ([]*sqsloop.Message, []*record) {
	n := min(req.MaxMessages, s.nVisible)
	if n == 0 {
		return nil, nil
	}
	out := make([]*sqsloop.Message, 0, n)
	buf := make([]sqsloop.Message, n)
	var dead []*record
	deliver := func(r *record) {
		s.hide(r, req.VisibilityTimeout, now)
		m := &buf[len(out)]
		s.fill(m, r, req.VisibilityTimeout, req.MessageAttributeNames)
		out = append(out, m)
	}
	if !s.cfg.FIFO {
		for len(out) < n && s.visible.head != nil {
			r := s.visible.head
			if s.redrives(r) {
				dead = s.deadLetter(r, dead)
				continue
			}
			s.visible.remove(r)
			deliver(r)
		}
		return out, dead
	}
	for len(out) < n {
		g := s.ready.pop()
		if g == nil {
			break
		}
		for r := g.msgs.head; r != nil && r.st == stVisible && len(out) < n; {
			next := r.next
			if s.redrives(r) {
				dead = s.deadLetter(r, dead)
			} else {
				deliver(r)
			}
			r = next
		}
		if g.msgs.n > 0 {
			s.groupChanged(g)
		}
	}
	return out, dead
}

// redrives reports whether the redrive policy moves r to the DLQ instead of
// delivering it again: it was already received MaxReceiveCount times.
func (s *queueState) redrives(r *record) bool {
	return s.dlq != nil && r.count >= s.cfg.MaxReceiveCount
}

// deadLetter takes visible r out of the queue for the DLQ.
func (s *queueState) deadLetter(r *record, dead []*record) []*record {
	s.unlink(r)
	s.stats.DeadLettered++
	return append(dead, r)
}

// moveToDLQ hands dead-lettered records to the DLQ. It runs without s.mu
// held, so that no two queue locks are ever held at once.
func (s *queueState) moveToDLQ(dead []*record) {
	if len(dead) > 0 {
		s.dlq.acceptDeadLetters(dead)
	}
}
