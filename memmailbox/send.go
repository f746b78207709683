package memmailbox

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Send enqueues 1–10 messages (SendMessageBatch) and returns one result per
// message, in order, with the message ID SQS-style (a UUID) and, on a FIFO
// queue, the sequence number, or the entry's error. A message is visible at once, or after its Delay (0–15 min, rounded
// up to whole seconds with sqsloop.WholeSeconds, as SQS counts
// DelaySeconds; 0 means the queue's Delay). Body and message attributes are
// copied.
//
// On a FIFO queue every message needs a MessageGroupID, and a
// DeduplicationID unless the queue has ContentBasedDeduplication (the
// SHA-256 of the body then stands in). A send whose deduplication ID was
// already sent within deduplicationInterval (5 min) succeeds with the first
// message's ID and enqueues nothing.
//
// A standard queue takes a MessageGroupID too, as SQS does for fair queues
// (the SDK's SendMessage doc): it orders nothing and holds no message back,
// and the received message reports it (Message.MessageGroupID and the
// MessageGroupId system attribute). A DeduplicationID is for FIFO queues
// only, as in SQS.
//
// Entry errors wrap sqsloop.ErrInvalidArgument and name the field and range:
// sqsloop.ValidateSend's error, unchanged, for a message SQS would reject on
// any queue (empty or oversized body, characters SQS rejects, more than 10 or
// malformed message attributes, Delay out of range, a malformed
// MessageGroupID or DeduplicationID); else this queue's own rule: a
// message over the queue's MaxMessageSize fails, naming its size; a FIFO
// queue takes no per-message Delay and needs a MessageGroupID, and a
// DeduplicationID unless ContentBasedDeduplication; a standard queue takes
// no DeduplicationID. The call as a whole fails with ValidateSend's error for
// an empty batch, more than 10 entries, or valid entries adding up to more
// than sqsloop.MaxMessageSize (1 MiB); with sqsloop.ErrQueueNotFound,
// sqsloop.ErrMailboxClosed, or ctx's error. Safe for concurrent use; it keeps
// no reference to msgs.
func (q *Queue) Send(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	s, err := q.state()
	if err != nil {
		return nil, err
	}
	invalid, err := sqsloop.ValidateSend(msgs)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	results := make([]sqsloop.SendResult, len(msgs))
	var recs [sqsloop.MaxBatchSize]*record
	var delays [sqsloop.MaxBatchSize]time.Duration
	for i, m := range msgs {
		if invalid[i] != nil {
			results[i].Err = invalid[i]
			continue
		}
		r, delay, err := prepare(i, m, s.cfg)
		if err != nil {
			results[i].Err = err
			continue
		}
		recs[i], delays[i] = r, delay
	}
	if err := q.lock(s); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	now := time.Now()
	for i, r := range recs[:len(msgs)] {
		if r == nil {
			continue
		}
		if s.cfg.FIFO {
			if first, dup := s.dedup.lookup(r.dedupID, now); dup {
				results[i].MessageID, results[i].SequenceNumber = first.messageID, first.seq
				s.stats.Duplicates++
				continue
			}
		}
		r.id = s.ids.messageID()
		r.sentAt = now
		s.enqueue(r, delays[i], now) // gives a FIFO message its sequence number
		if s.cfg.FIFO {
			s.dedup.add(r.dedupID, r.id, r.seq, now)
		}
		s.stats.Sent++
		results[i].MessageID, results[i].SequenceNumber = r.id, r.seq
	}
	return results, nil
}
