package memmailbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// prepare applies the rules of a queue configured as cfg to msgs[i] of a
// Send, which passed sqsloop.ValidateSend (the rules of every queue): its
// MaxMessageSize, FIFO's rules, the queue's delay. It
// returns the record to enqueue (without ID or times) and its delay, rounded
// up to whole seconds as SQS counts DelaySeconds. Errors wrap
// sqsloop.ErrInvalidArgument, in the grammar of sqsloop's request rules.
func prepare(i int, m sqsloop.OutgoingMessage, cfg sqsloop.QueueSpec) (*record, time.Duration, error) {
	bad := func(field, rule string) error {
		return fmt.Errorf("%w: Send: msgs[%d].%s: %s", sqsloop.ErrInvalidArgument, i, field, rule)
	}
	if size := m.Size(); size > cfg.MaxMessageSize {
		return nil, 0, fmt.Errorf("%w: Send: msgs[%d]: must take at most %d bytes on queue %q (its MaxMessageSize), body and message attributes together, got %d",
			sqsloop.ErrInvalidArgument, i, cfg.MaxMessageSize, cfg.Name, size)
	}
	r := &record{body: m.Body, attrs: copyAttrs(m.MessageAttributes, nil)}
	delay := cfg.Delay
	if m.Delay > 0 {
		delay = sqsloop.WholeSeconds(m.Delay)
	}
	if !cfg.FIFO {
		// SQS takes a MessageGroupId on a standard queue too (fair queues);
		// there it orders nothing, and the received message reports it.
		r.group = m.MessageGroupID
		if m.DeduplicationID != "" {
			return nil, 0, bad("DeduplicationID", "must be empty on a standard queue (only a FIFO queue deduplicates)")
		}
		return r, delay, nil
	}
	if m.Delay != 0 {
		return nil, 0, bad("Delay", fmt.Sprintf("must be 0 on a FIFO queue (it takes only the queue's delay), got %v", m.Delay))
	}
	if m.MessageGroupID == "" {
		return nil, 0, bad("MessageGroupID", "must not be empty on a FIFO queue")
	}
	r.group = m.MessageGroupID
	switch {
	case m.DeduplicationID != "":
		r.dedupID = m.DeduplicationID
	case cfg.ContentBasedDeduplication:
		sum := sha256.Sum256([]byte(m.Body))
		r.dedupID = hex.EncodeToString(sum[:])
	default:
		return nil, 0, bad("DeduplicationID", "must not be empty on a FIFO queue without ContentBasedDeduplication")
	}
	return r, delay, nil
}
