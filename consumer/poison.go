package consumer

import (
	"context"
	"errors"
	"log/slog"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// ErrPermanent is matched (errors.Is) by the errors Permanent returns.
var ErrPermanent = errors.New("consumer: permanent failure")

// Permanent wraps err to say that the message can never succeed (a poison
// message: a body that does not decode, a reference to something that
// does not exist): instead of being nacked and retried until the queue's
// maxReceiveCount, the message goes to the queue's dead-letter queue at
// once. The consumer sends a copy there (its body, the message attributes
// it received, and AttrPoisonReason, AttrPoisonMessageID and
// AttrPoisonReceiveCount saying why, which message and after how many
// receives; on a FIFO queue with its message group and deduplication ID, so
// the DLQ keeps the group's order and drops a second copy within 5 minutes),
// then deletes the original, in that order: if the process dies between
// the two, the message is in the source queue and in the DLQ, never in
// neither.
//
// The dead-letter queue is the one the queue's redrive policy names, found
// through sqsloop.DeadLetterQueueOpener (memmailbox and sqsmailbox have it;
// sqsmailbox needs sqs:GetQueueAttributes on the queue and sqs:GetQueueUrl
// and sqs:SendMessage on the DLQ). Without one (no redrive policy, a
// Mailbox that cannot name it, or a copy that failed) the message is
// nacked like any failure, with a WARN naming the queue and the reason.
// Package sqslambda does the same on AWS Lambda (with its optional SQS
// client; see its package doc).
//
// The error keeps err in its chain (errors.Is and errors.As reach it) and
// matches ErrPermanent. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string        { return "permanent failure: " + e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == ErrPermanent }

// ErrorType names the error's class for instrumentation (OpenTelemetry's
// error.type): "permanent".
func (e *permanentError) ErrorType() string { return "permanent" }

// Message attributes a poison message's copy in the dead-letter queue
// carries, beside its own: why it failed (the handler's error, cut to
// MaxPoisonReason bytes), the original message's ID, and its approximate
// receive count when it failed (1: the first delivery). They are added when
// the message has room for them (at most 7 attributes of its own, SQS's
// limit being 10, and 1 MiB in all); else the copy carries its own only,
// and the WARN line has them. Package sqslambda's copies carry the same.
const (
	AttrPoisonReason       = rules.AttrPoisonReason       // "sqsloop.poison.reason"
	AttrPoisonMessageID    = rules.AttrPoisonMessageID    // "sqsloop.poison.message-id"
	AttrPoisonReceiveCount = rules.AttrPoisonReceiveCount // "sqsloop.poison.receive-count"

	// MaxPoisonReason bounds AttrPoisonReason: 1,024 bytes.
	MaxPoisonReason = rules.MaxPoisonReason
)

// deadLetter moves a message whose handler failed with a Permanent error
// to the dead-letter queue (copy, then ack) and reports true; it reports
// false, after a WARN, when it could not, for the caller to nack it.
func (c *Consumer) deadLetter(ctx context.Context, m *sqsloop.Message, lease *leases.Lease, err error) bool {
	if !errors.Is(err, ErrPermanent) {
		return false
	}
	if derr := c.dead.Copy(context.WithoutCancel(ctx), m, err); derr != nil {
		c.cfg.Logger.Warn("consumer: a permanent failure, but the message could not go to the dead-letter queue; nacking it like any failure",
			slog.String("message_id", m.ID), slog.Any("error", err), slog.Any("reason", derr))
		return false
	}
	c.st.poisoned.Add(1)
	c.cfg.Logger.Warn("consumer: a permanent failure; the message was copied to the dead-letter queue and is deleted",
		slog.String("message_id", m.ID), slog.Int("receive_count", m.ReceiveCount), slog.Any("error", err))
	lease.Ack()
	return true
}
