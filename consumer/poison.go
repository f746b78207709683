package consumer

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
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
// client; see its package doc), through DeadLetters.
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
// and the WARN line has them.
const (
	AttrPoisonReason       = "sqsloop.poison.reason"
	AttrPoisonMessageID    = "sqsloop.poison.message-id"
	AttrPoisonReceiveCount = "sqsloop.poison.receive-count"

	// MaxPoisonReason bounds AttrPoisonReason: 1,024 bytes.
	MaxPoisonReason = 1024
)

// deadLetter moves a message whose handler failed with a Permanent error
// to the dead-letter queue (copy, then ack) and reports true; it reports
// false, after a WARN, when it could not, for the caller to nack it.
func (c *Consumer) deadLetter(ctx context.Context, m *sqsloop.Message, lease *visibility.Lease, err error) bool {
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

// poisonCopy is m as it goes to the dead-letter queue, failed with err.
func poisonCopy(m *sqsloop.Message, err error) sqsloop.OutgoingMessage {
	out := sqsloop.OutgoingMessage{Body: m.Body, MessageGroupID: m.MessageGroupID}
	if m.Attributes[sqsloop.AttrSequenceNumber] != "" { // FIFO
		out.DeduplicationID = m.Attributes[sqsloop.AttrMessageDeduplicationID]
	}
	own := m.MessageAttributes
	if len(own)+3 > sqsloop.MaxMessageAttributes {
		out.MessageAttributes = maps.Clone(own)
		return out
	}
	with := make(map[string]sqsloop.MessageAttribute, len(own)+3)
	maps.Copy(with, own)
	with[AttrPoisonReason] = sqsloop.MessageAttribute{DataType: "String", StringValue: reason(err)}
	with[AttrPoisonMessageID] = sqsloop.MessageAttribute{DataType: "String", StringValue: m.ID}
	with[AttrPoisonReceiveCount] = sqsloop.MessageAttribute{DataType: "Number", StringValue: strconv.Itoa(m.ReceiveCount)}
	if m.ID == "" { // no empty String attribute in SQS
		delete(with, AttrPoisonMessageID)
	}
	out.MessageAttributes = with
	if out.Size() > sqsloop.MaxMessageSize { // seldom: no room left in 1 MiB
		out.MessageAttributes = maps.Clone(own)
	}
	return out
}

// reason is err's text as an attribute value: the characters SQS takes
// (others become '?'), at most MaxPoisonReason bytes, never empty.
func reason(err error) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r == '\t', r == '\n', r == '\r':
			return r
		case r < 0x20, r >= 0xD800 && r < 0xE000, r == 0xFFFE, r == 0xFFFF, r == utf8.RuneError:
			return '?'
		}
		return r
	}, err.Error())
	for len(s) > MaxPoisonReason {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	if s == "" {
		s = "?"
	}
	return s
}
