package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/internal/rules"
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
// Safe for concurrent use; its mutex is never held across a call to SQS or
// to Config.OpenQueue (check).
type queueState struct {
	arn string

	mu       sync.Mutex
	q        Queue              // the client; nil until opened, or when there is none
	dead     *rules.DeadLetters // q's dead-letter queue, for Permanent failures; set with q
	vt       time.Duration      // the queue's visibility timeout; 0 until read
	ls       *leases.Lengths    // the lease owners' extensions, chosen from what every invocation observed; set with vt
	failures int                // attribute reads failed transiently in a row, across invocations
	denied   int                // visibility changes denied in a row, across invocations
	off      error              // why the client is not used any more; nil while it is
	checking chan struct{}      // closed when the check under way (open, attributes) ends; nil when none is
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

// client returns the queue's client, its visibility timeout and the
// Lengths of its lease owners, or a nil Queue when the records of this
// queue run without one. Until the queue is checked, it checks it (check):
// one invocation at a time; another that comes meanwhile waits for that
// check, but no longer than its own would take (maxCheckTimeout, and a
// quarter of its time), and then runs without a client, leaving the check
// to go on. start and deadline are the invocation's (deadline zero when it
// has none).
func (s *queueState) client(ctx context.Context, h *Handler, start, deadline time.Time) (Queue, time.Duration, *leases.Lengths) {
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
	defer cancel()
	for {
		s.mu.Lock()
		switch {
		case s.off != nil:
			s.mu.Unlock()
			return nil, 0, nil
		case s.vt > 0:
			defer s.mu.Unlock()
			return s.q, s.vt, s.ls
		case s.checking != nil:
			checking := s.checking
			s.mu.Unlock()
			select {
			case <-checking:
				continue
			case <-cctx.Done():
				h.cfg.Logger.Warn("sqslambda: another invocation is still reading the queue's attributes; this one runs without extension and back-off",
					slog.String("event_source_arn", s.arn), slog.String("waited", timeout.String()))
				return nil, 0, nil
			}
		}
		checking := make(chan struct{})
		s.checking = checking
		q := s.q
		s.mu.Unlock()
		return s.check(cctx, h, q, functionTimeout, checking)
	}
}

// check opens the queue (Config.OpenQueue) unless q is its client already,
// and reads its attributes under ctx, logging what goes against AWS's
// guidance (queueWarnings). An attribute read that fails transiently is
// tried again at the next invocation, up to maxCheckFailures (3) in a row;
// one denied or otherwise permanent, or the last of those, turns the
// client off until the next cold start, as does an OpenQueue error. It
// records the outcome and closes checking; it calls SQS and logs without
// s.mu, which other invocations' lease owners take (observe).
func (s *queueState) check(ctx context.Context, h *Handler, q Queue, functionTimeout time.Duration, checking chan struct{}) (Queue, time.Duration, *leases.Lengths) {
	var dead *rules.DeadLetters
	var err error
	if q == nil {
		q, dead, err = open(s.arn, h.cfg.OpenQueue)
	}
	var attrs sqsloop.QueueAttributes
	if err == nil {
		attrs, err = q.QueueAttributes(ctx)
	}
	read := q != nil && err == nil // the attributes are in
	var lc visibility.Config
	var ls *leases.Lengths
	if read {
		if lc, err = leases.ForVisibilityTimeout(h.cfg.Visibility, attrs.VisibilityTimeout); err != nil {
			err = fmt.Errorf("sqslambda: Visibility on a queue whose visibility timeout is %v: %w", attrs.VisibilityTimeout, err)
		}
	}

	log := h.cfg.Logger.With(slog.String("event_source_arn", s.arn))
	s.mu.Lock()
	s.checking = nil
	if s.q == nil && q != nil {
		s.q, s.dead = q, dead
	}
	var report func()
	switch {
	case q == nil: // OpenQueue failed
		s.off = err
		report = func() {
			log.Error("sqslambda: no SQS client for the queue; records run without extension and back-off", slog.Any("error", err))
		}
	case read && err != nil: // Visibility does not fit the queue
		s.off = err
		report = func() { log.Error("sqslambda: records run without extension and back-off", slog.Any("error", err)) }
	case err != nil:
		s.failures++
		failures := s.failures
		switch {
		case rules.Permanent(err):
			s.off = err
			report = func() {
				log.Error("sqslambda: cannot read the queue's attributes (is sqs:GetQueueAttributes allowed?); records run without extension and back-off until the next cold start",
					slog.Any("error", err))
			}
		case failures >= maxCheckFailures:
			s.off = fmt.Errorf("sqslambda: %d attribute reads failed in a row: %w", failures, err)
			report = func() {
				log.Error("sqslambda: cannot read the queue's attributes (can the function reach SQS, e.g. through a VPC endpoint?); records run without extension and back-off until the next cold start",
					slog.Int("attempts", failures), slog.Any("error", err))
			}
		default:
			report = func() {
				log.Warn("sqslambda: could not read the queue's attributes; this invocation runs without extension and back-off, the next one tries again",
					slog.Int("attempt", failures), slog.Int("attempts", maxCheckFailures), slog.Any("error", err))
			}
		}
	default:
		ls = leases.NewLengths(lc)
		s.vt, s.ls = attrs.VisibilityTimeout, ls
	}
	s.mu.Unlock()
	close(checking)

	if read {
		for _, w := range queueWarnings(attrs, functionTimeout) {
			log.Warn("sqslambda: " + w)
		}
	}
	if report != nil {
		report()
		return nil, 0, nil
	}
	return q, attrs.VisibilityTimeout, ls
}

// open makes the client of the queue arn names with open, and its
// dead-letter queue.
func open(arn string, open func(string) (Queue, error)) (Queue, *rules.DeadLetters, error) {
	url, err := QueueURL(arn)
	if err != nil {
		return nil, nil, err
	}
	q, err := open(url)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("sqslambda: OpenQueue(%s): %w", url, err)
	case q == nil:
		return nil, nil, fmt.Errorf("sqslambda: OpenQueue(%s) returned no Queue: %w", url, sqsloop.ErrInvalidArgument)
	}
	return q, rules.NewDeadLetters(q), nil
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
	denied, ok := rules.FaultOf(err) == rules.Denied, false
	if err == nil {
		for _, e := range errs {
			denied = denied || rules.FaultOf(e) == rules.Denied
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
