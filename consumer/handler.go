package consumer

import (
	"context"

	"github.com/sqsloop/sqsloop"
)

// Handler processes one message. It returns nil to ack the message, or an
// error to nack it (it will be delivered again after the retry back-off; wrap
// the error with NackAfter to choose the delay). A long handler proves it is
// alive with heartbeat.Beat(ctx), at least once per visibility.Config.Interval
// (60 s by default); without beats its lease lapses after the visibility
// timeout and another worker gets the message. A handler that finishes
// within Config.VisibilityTimeout need not beat at all.
//
// ctx is cancelled when the consumer's drain budget runs out, and, with
// visibility.Config.CancelOnLeaseLost, when the lease is lost
// (context.Cause matches visibility.ErrLeaseLost). A Handler runs
// concurrently with other handlers (Config.Concurrency); it must not keep m
// after it returns.
//
// Handler is an alias, not a type of its own: any function of this shape
// is one, so that a package offering middleware (checkpoint, idempotency)
// need not import consumer for its func(Handler) Handler to fit
// Config.Middleware.
type Handler = func(ctx context.Context, m *sqsloop.Message) error

// Middleware wraps a Handler with behaviour of its own (logging, metrics,
// tracing), the way the consumer's own panic recovery is built.
type Middleware func(Handler) Handler
