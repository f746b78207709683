package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// Why a record of a queue without a client in this invocation cannot go
// to the dead-letter queue.
var (
	errNoOpenQueue = fmt.Errorf("no SQS client: Config.OpenQueue is nil: %w", sqsloop.ErrNoDeadLetterQueue)
	errClientOff   = fmt.Errorf("the queue's SQS client is off in this invocation (see the ERROR or WARN logged about it): %w", sqsloop.ErrNoDeadLetterQueue)
)

// deadLetter copies record i, whose handler (running with ctx) failed with
// err, to its queue's dead-letter queue when err is sqsloop.Permanent,
// as the consumer does (the same copy: rules.DeadLetters), and reports whether the
// dead-letter queue has the copy: the record is then reported processed,
// and the event source mapping deletes the original after Handle answers.
// When it could not (no client, no dead-letter queue, the copy failed) it
// reports false after a WARN naming the queue, for the caller to fail the
// record like any other.
//
// The copy gets the time left until Handle stops waiting for handlers
// (DeadlineMargin/4 after the cut-off), and at most 10 s: Handle answers
// after it, never during it, so a crash in between leaves the message in
// the source queue (redelivered) or in both, never in neither; a copy that
// would run past that fails, and so does the record.
func (b *batch) deadLetter(ctx context.Context, i int, err error) bool {
	if !errors.Is(err, sqsloop.ErrPermanent) {
		return false
	}
	m, arn := b.msgs[i], b.recs[i].EventSourceARN
	var (
		d    *rules.DeadLetters
		derr error
	)
	if b.dead != nil {
		d = b.dead[i]
	}
	switch {
	case b.h.cfg.OpenQueue == nil:
		derr = errNoOpenQueue
	case d == nil:
		derr = errClientOff
	default:
		cctx := context.WithoutCancel(ctx) // the handler's context ends at the cut-off, or when its lease is lost
		if !b.cut.IsZero() {
			var cancel context.CancelFunc
			cctx, cancel = context.WithDeadlineCause(cctx, b.cut.Add(b.grace), ErrDeadline)
			defer cancel()
		}
		if derr = d.Copy(cctx, m, err); derr != nil && errors.Is(context.Cause(cctx), ErrDeadline) {
			derr = fmt.Errorf("the copy ran into the invocation's deadline margin (%w): %w", ErrDeadline, derr)
		}
	}
	if derr != nil {
		b.h.cfg.Logger.Warn("sqslambda: a permanent failure, but the record could not go to the dead-letter queue; reporting it failed like any failure",
			slog.String("message_id", m.ID), slog.String("event_source_arn", arn), slog.Any("error", err), slog.Any("reason", derr))
		return false
	}
	b.h.st.poisoned.Add(1)
	b.h.cfg.Logger.Warn("sqslambda: a permanent failure; the record was copied to the dead-letter queue and is reported processed, for the event source mapping to delete",
		slog.String("message_id", m.ID), slog.String("event_source_arn", arn), slog.Int("receive_count", m.ReceiveCount), slog.Any("error", err))
	return true
}
