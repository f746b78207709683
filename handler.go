package sqsloop

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Handler processes one message: the same function in every runtime (a
// consumer, package consumer; an AWS Lambda function, package sqslambda).
// It returns nil to ack the message, or an error to nack it: the message
// is delivered again after the runtime's retry back-off (wrap the error
// with NackAfter to choose the delay, with Permanent to send the message to
// the dead-letter queue at once). A long handler proves it is alive with
// heartbeat.Beat(ctx), at least once per visibility timeout; without beats
// its lease lapses and another worker gets the message. A handler that
// finishes within the visibility timeout need not beat at all.
//
// ctx carries the message's heartbeat (package heartbeat) and, under a
// lease owner, its Lease (LeaseFromContext). The runtime cancels it when
// its drain budget or deadline runs out, and, with
// visibility.Config.CancelOnLeaseLost, when the lease is lost. A Handler
// runs concurrently with other handlers; it must not keep m after it
// returns.
//
// Handler is an alias, not a type of its own: any function of this shape
// is one, so a method value (a middleware's) fits as it is.
type Handler = func(ctx context.Context, m *Message) error

// Middleware wraps a Handler with behaviour of its own (logging, metrics,
// tracing, checkpoints, idempotency), the way the runtimes' own panic
// recovery is built. An alias, like Handler: a method value such as
// (*checkpoint.Checkpoints).Middleware fits consumer.Config.Middleware and
// sqslambda.Config.Middleware as it is.
type Middleware = func(Handler) Handler

// ErrPermanent is matched (errors.Is) by the errors Permanent returns.
var ErrPermanent = errors.New("sqsloop: permanent failure")

// Permanent wraps err to say that the message can never succeed (a poison
// message: a body that does not decode, a reference to something that
// does not exist): instead of being nacked and retried until the queue's
// maxReceiveCount, the message goes to the queue's dead-letter queue at
// once. The runtime sends a copy there (its body, the message attributes
// it received, and AttrPoisonReason, AttrPoisonMessageID and
// AttrPoisonReceiveCount saying why, which message and after how many
// receives; on a FIFO queue with its message group and deduplication ID, so
// the DLQ keeps the group's order and drops a second copy within 5
// minutes), then deletes the original, in that order: if the process dies
// between the two, the message is in the source queue and in the DLQ,
// never in neither.
//
// The dead-letter queue is the one the queue's redrive policy names, found
// through DeadLetterQueueOpener (memmailbox and sqsmailbox have it;
// sqsmailbox needs sqs:GetQueueAttributes on the queue and sqs:GetQueueUrl
// and sqs:SendMessage on the DLQ). Without one (no redrive policy, a
// Mailbox that cannot name it, or a copy that failed) the message is
// nacked like any failure, with a WARN naming the queue and the reason.
// Package consumer and package sqslambda (with its optional SQS client) do
// the same.
//
// The error keeps err in its chain (errors.Is and errors.As reach it) and
// matches ErrPermanent; its ErrorType method returns "permanent", the class
// OpenTelemetry's error.type reads. Permanent(nil) is nil.
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
// carries (Permanent), beside its own: why it failed (the handler's error,
// cut to MaxPoisonReason bytes), the original message's ID, and its
// approximate receive count when it failed (1: the first delivery). They
// are added when the message has room for them (at most 7 attributes of
// its own, SQS's limit being 10, and 1 MiB in all); else the copy carries
// its own only, and the WARN line has them. Both runtimes' copies carry
// the same.
const (
	AttrPoisonReason       = "sqsloop.poison.reason"
	AttrPoisonMessageID    = "sqsloop.poison.message-id"
	AttrPoisonReceiveCount = "sqsloop.poison.receive-count"

	// MaxPoisonReason bounds AttrPoisonReason: 1,024 bytes.
	MaxPoisonReason = 1024
)

// NackAfter wraps err so that its message is nacked with delay (clamped to
// 0–12 h, rounded up to whole seconds by SQS) instead of the runtime's
// back-off (consumer.Config.Backoff, sqslambda.Config.Backoff); the
// wrapped error still matches err with errors.Is and errors.As. A nil err
// stays nil.
func NackAfter(err error, delay time.Duration) error {
	if err == nil {
		return nil
	}
	return &nackError{delay: delay, err: err}
}

// nackError carries the delay a failed message is nacked with.
type nackError struct {
	delay time.Duration
	err   error
}

func (e *nackError) Error() string { return fmt.Sprintf("%v (retry in %v)", e.err, e.delay) }
func (e *nackError) Unwrap() error { return e.err }

// NackDelay is the delay NackAfter put on the error: the runtimes read it
// (errors.As to an interface with this method) to choose the nack's delay.
func (e *nackError) NackDelay() time.Duration { return e.delay }

// Defaults of ExponentialBackoff: 1 s after a first failed receive,
// doubling, at most 5 min.
const (
	defaultBackoffInitial = time.Second
	defaultBackoffMax     = 5 * time.Minute
)

// ExponentialBackoff returns a retry back-off for the runtimes
// (consumer.Config.Backoff, sqslambda.Config.Backoff): how long a failed
// message stays hidden before its next delivery, given its approximate
// receive count (1 on the first delivery), doubling from initial on the
// first failure up to max: initial·2^(receiveCount-1), capped. Non-positive
// arguments take the defaults: initial 1 s, max 5 min (both runtimes'
// default is ExponentialBackoff(0, 0)). The function returned is safe for
// concurrent use.
func ExponentialBackoff(initial, max time.Duration) func(receiveCount int) time.Duration {
	if initial <= 0 {
		initial = defaultBackoffInitial
	}
	if max <= 0 {
		max = defaultBackoffMax
	}
	return func(receiveCount int) time.Duration {
		d := initial
		for i := 1; i < receiveCount && d < max; i++ {
			d *= 2
		}
		return min(d, max)
	}
}
