package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/visibility"
)

// maxCheckTimeout bounds the GetQueueAttributes call of the cold start; it
// also gets at most a quarter of the invocation's time.
const maxCheckTimeout = 5 * time.Second

// maxCheckFailures is how many invocations in a row may fail to read the
// queue's attributes transiently before the client is off until the next
// cold start: 3, enough to ride over a blip, few enough that an SQS that
// cannot be reached (a VPC without an SQS endpoint) does not cost every
// invocation the wait before its records run.
const maxCheckFailures = 3

// queueState is what a Handler knows of one queue (one eventSourceARN)
// for the life of the execution environment: its client, its attributes,
// read once, and whether the client is off until the next cold start.
// Safe for concurrent use.
type queueState struct {
	arn string

	mu       sync.Mutex
	q        Queue                 // the client; nil until opened, or when there is none
	dead     *consumer.DeadLetters // q's dead-letter queue, for Permanent failures; set with q
	vt       time.Duration         // the queue's visibility timeout; 0 until read
	lc       visibility.Config
	failures int   // attribute reads failed transiently in a row, across invocations
	denied   int   // visibility changes denied in a row, across invocations
	off      error // why the client is not used any more; nil while it is
}

// state returns the state of the queue arn names, made on first use.
func (h *Handler) state(arn string) *queueState {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.queues[arn]
	if s == nil {
		s = &queueState{arn: arn}
		h.queues[arn] = s
	}
	return s
}

// client returns the queue's client, its visibility timeout and the lease
// owner's configuration for it, or a nil Queue when the records of this
// queue run without one. At the first call it opens the queue
// (Config.OpenQueue) and reads its attributes, logging what goes against
// AWS's guidance (queueWarnings); an attribute read that fails transiently
// is tried again at the next invocation, up to maxCheckFailures (3) in a
// row; one denied or otherwise permanent, or the last of those, turns the
// client off until the next cold start, as does an OpenQueue error. start and
// deadline are the invocation's (deadline zero when it has none).
func (s *queueState) client(ctx context.Context, h *Handler, start, deadline time.Time) (Queue, time.Duration, visibility.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.off != nil:
		return nil, 0, visibility.Config{}
	case s.vt > 0:
		return s.q, s.vt, s.lc
	}
	log := h.cfg.Logger.With(slog.String("event_source_arn", s.arn))
	if s.q == nil {
		if err := s.open(h.cfg.OpenQueue); err != nil {
			s.off = err
			log.Error("sqslambda: no SQS client for the queue; records run without extension and back-off", slog.Any("error", err))
			return nil, 0, visibility.Config{}
		}
	}
	timeout, functionTimeout := maxCheckTimeout, time.Duration(0)
	if !deadline.IsZero() {
		left := deadline.Sub(start)
		timeout = min(timeout, left/4)
		functionTimeout = left.Truncate(time.Second)
		if functionTimeout < left {
			functionTimeout += time.Second // Lambda's timeouts are whole seconds
		}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	attrs, err := s.q.QueueAttributes(cctx)
	cancel()
	if err != nil {
		s.failures++
		switch {
		case permanent(err):
			s.off = err
			log.Error("sqslambda: cannot read the queue's attributes (is sqs:GetQueueAttributes allowed?); records run without extension and back-off until the next cold start",
				slog.Any("error", err))
		case s.failures >= maxCheckFailures:
			s.off = fmt.Errorf("sqslambda: %d attribute reads failed in a row: %w", s.failures, err)
			log.Error("sqslambda: cannot read the queue's attributes (can the function reach SQS, e.g. through a VPC endpoint?); records run without extension and back-off until the next cold start",
				slog.Int("attempts", s.failures), slog.Any("error", err))
		default:
			log.Warn("sqslambda: could not read the queue's attributes; this invocation runs without extension and back-off, the next one tries again",
				slog.Int("attempt", s.failures), slog.Int("attempts", maxCheckFailures), slog.Any("error", err))
		}
		return nil, 0, visibility.Config{}
	}
	for _, w := range queueWarnings(attrs, functionTimeout) {
		log.Warn("sqslambda: " + w)
	}
	lc, err := h.cfg.Visibility.ForVisibilityTimeout(attrs.VisibilityTimeout)
	if err != nil {
		s.off = fmt.Errorf("sqslambda: Visibility on a queue whose visibility timeout is %v: %w", attrs.VisibilityTimeout, err)
		log.Error("sqslambda: records run without extension and back-off", slog.Any("error", s.off))
		return nil, 0, visibility.Config{}
	}
	s.vt, s.lc = attrs.VisibilityTimeout, lc
	return s.q, s.vt, s.lc
}

// open makes the queue's client with open. Called with s.mu held.
func (s *queueState) open(open func(string) (Queue, error)) error {
	url, err := QueueURL(s.arn)
	if err != nil {
		return err
	}
	q, err := open(url)
	switch {
	case err != nil:
		return fmt.Errorf("sqslambda: OpenQueue(%s): %w", url, err)
	case q == nil:
		return fmt.Errorf("sqslambda: OpenQueue(%s) returned no Queue: %w", url, sqsloop.ErrInvalidArgument)
	}
	s.q, s.dead = q, consumer.NewDeadLetters(q)
	return nil
}

// permanent reports whether err will not heal by trying again at the next
// invocation.
func permanent(err error) bool {
	for _, p := range []error{sqsloop.ErrAccessDenied, sqsloop.ErrQueueNotFound, sqsloop.ErrInvalidArgument, sqsloop.ErrMailboxClosed} {
		if errors.Is(err, p) {
			return true
		}
	}
	return false
}

// guard is the Mailbox a lease owner of the queue calls: s's client, with
// the denied visibility changes counted across invocations. After
// visibility.MaxAccessDenied (5) in a row the client is off until the next
// cold start, so a missing sqs:ChangeMessageVisibility is reported once and
// not paid for in every invocation.
type guard struct {
	q   Queue
	s   *queueState
	log *slog.Logger
}

func (g guard) Delete(ctx context.Context, receiptHandles []string) ([]error, error) {
	return g.q.Delete(ctx, receiptHandles)
}

func (g guard) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	errs, err := g.q.ChangeVisibility(ctx, changes)
	denied, ok := errors.Is(err, sqsloop.ErrAccessDenied), false
	if err == nil {
		for _, e := range errs {
			denied = denied || errors.Is(e, sqsloop.ErrAccessDenied)
			ok = ok || e == nil
		}
	}
	if denied || ok {
		g.s.observe(denied, err, errs, g.log)
	}
	return errs, err
}

// observe counts a denied visibility change, or resets the count after
// one that succeeded.
func (s *queueState) observe(denied bool, err error, errs []error, log *slog.Logger) {
	s.mu.Lock()
	if !denied {
		s.denied = 0
		s.mu.Unlock()
		return
	}
	s.denied++
	turnOff := s.denied >= visibility.MaxAccessDenied && s.off == nil
	if turnOff {
		if err == nil {
			err = errors.Join(errs...)
		}
		s.off = fmt.Errorf("sqslambda: %d visibility changes denied in a row: %w", s.denied, err)
	}
	s.mu.Unlock()
	if turnOff {
		log.Error("sqslambda: visibility changes are denied (is sqs:ChangeMessageVisibility allowed?); records run without extension and back-off until the next cold start",
			slog.String("event_source_arn", s.arn), slog.Any("error", err))
	}
}
