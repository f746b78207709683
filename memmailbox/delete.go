package memmailbox

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Delete acks 1–10 messages by receipt handle (DeleteMessageBatch) and
// returns one error per handle, in order, nil for a successful entry.
//
// The newest receipt handle of a message deletes it. On a standard queue it
// still does after the visibility timeout ended, as long as no receive has
// produced a newer one; and, as SQS does for a standard queue ("If you use
// an old ReceiptHandle, the request will succeed, but the message might not
// be deleted": the SDK's DeleteMessage doc), a handle this queue issued that
// no longer holds its message (superseded by a newer receive, or its message
// already deleted or moved to the DLQ) succeeds and deletes nothing; Stats
// counts it in StaleDeletes. A message still in the queue stays there, to be
// deleted by its newest handle or delivered again.
//
// A FIFO queue's receipt handle expires with the visibility timeout of the
// receive that produced it: once the message is visible again or received
// again, a delete with it fails its entry with an error wrapping
// sqsloop.ErrReceiptHandleExpired, as SQS does ("The receipt handle has
// expired": AWS knowledge center, sqs-receipt-handle-error); so does a
// handle whose message is already deleted.
//
// Entry errors: a handle this queue never issued (made up, altered, or from
// another queue) wraps sqsloop.ErrReceiptHandleExpired (SQS:
// ReceiptHandleIsInvalid); an empty handle fails with
// sqsloop.ValidateDelete's error, wrapping sqsloop.ErrInvalidArgument.
//
// The call as a whole fails (second result) with sqsloop.ValidateDelete's
// error (wrapping sqsloop.ErrInvalidArgument) for an empty batch or more than
// 10 handles, with sqsloop.ErrQueueNotFound,
// with sqsloop.ErrMailboxClosed, or with ctx's error. Safe for concurrent
// use; it keeps no reference to receiptHandles.
func (q *Queue) Delete(ctx context.Context, receiptHandles []string) ([]error, error) {
	s, err := q.state()
	if err != nil {
		return nil, err
	}
	errs, err := sqsloop.ValidateDelete(receiptHandles)
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
	s.sweep(time.Now())
	for i, h := range receiptHandles {
		if errs[i] != nil {
			continue
		}
		r := s.handles[h]
		switch {
		case r == nil && !s.ids.issued(h):
			errs[i] = fmt.Errorf("memmailbox: Delete entry %d: receipt handle not issued by queue %q: %w",
				i, s.name, sqsloop.ErrReceiptHandleExpired)
		case r == nil && s.cfg.FIFO:
			errs[i] = fmt.Errorf("memmailbox: Delete entry %d: FIFO receipt handle expired: superseded by a newer receive, or its message deleted: %w",
				i, sqsloop.ErrReceiptHandleExpired)
		case r == nil:
			s.stats.StaleDeletes++ // standard queue: success, nothing deleted
		case s.cfg.FIFO && r.st != stInflight:
			errs[i] = fmt.Errorf("memmailbox: Delete entry %d: visibility timeout ended, FIFO receipt handle expired: %w",
				i, sqsloop.ErrReceiptHandleExpired)
		default:
			s.unlink(r)
			s.stats.Deleted++
		}
	}
	return errs, nil
}
