package memmailbox

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Delete acks 1–10 messages by receipt handle (DeleteMessageBatch) and
// returns one error per handle, in order, nil for a deleted message.
//
// Only the newest receipt handle of a message deletes it; an older one, an
// unknown one, or one of a message already deleted fails its entry with an
// error wrapping sqsloop.ErrReceiptHandleExpired. Like SQS, a standard queue
// still deletes with the newest handle after the visibility timeout ended, as
// long as no receive has produced a newer one; a FIFO queue fails it instead
// ("the receipt handle has expired"). An empty handle fails its entry with
// sqsloop.ErrInvalidArgument.
//
// The call as a whole fails (second result) with sqsloop.ErrInvalidArgument
// for an empty batch or more than 10 handles, with sqsloop.ErrQueueNotFound,
// with sqsloop.ErrMailboxClosed, or with ctx's error. Safe for concurrent
// use; it keeps no reference to receiptHandles.
func (q *Queue) Delete(ctx context.Context, receiptHandles []string) ([]error, error) {
	s, err := q.state()
	if err != nil {
		return nil, err
	}
	if err := validateBatch("Delete", len(receiptHandles)); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	errs := make([]error, len(receiptHandles))
	if err := q.lock(s); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	s.sweep(time.Now())
	for i, h := range receiptHandles {
		if h == "" {
			errs[i] = fmt.Errorf("memmailbox: Delete entry %d: empty receipt handle: %w", i, sqsloop.ErrInvalidArgument)
			continue
		}
		r := s.handles[h]
		if r == nil {
			errs[i] = fmt.Errorf("memmailbox: Delete entry %d: receipt handle unknown, superseded by a newer receive, or its message deleted: %w",
				i, sqsloop.ErrReceiptHandleExpired)
			continue
		}
		if s.cfg.FIFO && r.st != stInflight {
			errs[i] = fmt.Errorf("memmailbox: Delete entry %d: visibility timeout ended, FIFO receipt handle expired: %w",
				i, sqsloop.ErrReceiptHandleExpired)
			continue
		}
		s.unlink(r)
		s.stats.Deleted++
	}
	return errs, nil
}
