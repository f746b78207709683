package memmailbox

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// ChangeVisibility sets the visibility timeout of 1–10 in-flight messages,
// counted from now (ChangeMessageVisibilityBatch), and returns one error per
// entry, in order, nil on success. Timeout 0 nacks: the message is visible
// again at once (its receipt handle stays valid for Delete on a standard
// queue). More extends, or shortens, the lease; like SQS it counts whole
// seconds, rounding Timeout up with sqsloop.WholeSeconds.
//
// Entry errors: an empty receipt handle or a Timeout outside 0–12 h fails
// with sqsloop.ValidateChangeVisibility's error, wrapping
// sqsloop.ErrInvalidArgument; a receipt handle this queue never issued (SQS: ReceiptHandleIsInvalid), one
// superseded by a newer receive, of a deleted message, or of a message no
// longer in flight (SQS: MessageNotInflight) wraps
// sqsloop.ErrReceiptHandleExpired, on either queue type (unlike Delete,
// which succeeds with a stale handle on a standard queue, as SQS does); a
// timeout reaching past 12 h after
// the receive that produced the handle (Message.ReceivedAt) wraps
// sqsloop.ErrLeaseCeiling, and changes nothing.
//
// The call as a whole fails as Delete's does. Safe for concurrent use; it
// keeps no reference to changes.
func (q *Queue) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	s, err := q.state()
	if err != nil {
		return nil, err
	}
	errs, err := sqsloop.ValidateChangeVisibility(changes)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := q.lock(s); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	now := time.Now()
	s.sweep(now)
	for i, c := range changes {
		if errs[i] == nil {
			errs[i] = s.changeVisibility(i, c, now)
		}
	}
	return errs, nil
}

// changeVisibility applies entry i, which passed
// sqsloop.ValidateChangeVisibility. s.mu is held and s swept up to now.
func (s *queueState) changeVisibility(i int, c sqsloop.VisibilityChange, now time.Time) error {
	r := s.handles[c.ReceiptHandle]
	if r == nil && !s.ids.issued(c.ReceiptHandle) {
		return fmt.Errorf("memmailbox: ChangeVisibility entry %d: receipt handle not issued by queue %q: %w",
			i, s.name, sqsloop.ErrReceiptHandleExpired)
	}
	if r == nil {
		return fmt.Errorf("memmailbox: ChangeVisibility entry %d: receipt handle superseded by a newer receive, or its message deleted: %w",
			i, sqsloop.ErrReceiptHandleExpired)
	}
	if r.st != stInflight {
		return fmt.Errorf("memmailbox: ChangeVisibility entry %d: message not in flight (its visibility timeout ended): %w",
			i, sqsloop.ErrReceiptHandleExpired)
	}
	due := now.Add(sqsloop.WholeSeconds(c.Timeout))
	if ceiling := r.receivedAt.Add(sqsloop.MaxVisibilityTimeout); due.After(ceiling) {
		return fmt.Errorf("memmailbox: ChangeVisibility entry %d: visible again at %v is %v past the 12h ceiling after the receive at %v: %w",
			i, due, due.Sub(ceiling), r.receivedAt, sqsloop.ErrLeaseCeiling)
	}
	if c.Timeout == 0 {
		s.inflight.remove(r)
		s.stats.Returned++
		r.due = now
		s.reveal(r)
		return nil
	}
	earlier := due.Before(r.due)
	r.due = due
	s.inflight.fix(r.hidx)
	if earlier {
		s.signal() // a waiting long poll may need to wake sooner
	}
	return nil
}
