package consumer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
)

// settleCallTimeout bounds one DeleteMessageBatch or
// ChangeMessageVisibilityBatch call of the settler.
const settleCallTimeout = 30 * time.Second

// settlement is one ack (delay < 0) or nack (delay ≥ 0) waiting for its batch.
type settlement struct {
	m     *sqsloop.Message
	delay time.Duration
}

// settler coalesces acks into DeleteMessageBatch calls and nacks into
// ChangeMessageVisibilityBatch calls: a batch goes out as soon as it has 10
// entries, or when its oldest entry has waited the window. Handlers add to
// the batches under a mutex (no goroutine hand-off per message); each call
// goes out on a goroutine of its own, tracked until close returns.
type settler struct {
	mb     sqsloop.Mailbox
	window time.Duration
	log    *slog.Logger
	st     *counters
	ctx    context.Context // values only: acks go out even while draining

	mu          sync.Mutex
	acks, nacks []settlement
	timer       *time.Timer // armed while a batch waits; its run is counted in calls
	calls       sync.WaitGroup
}

func newSettler(ctx context.Context, mb sqsloop.Mailbox, window time.Duration, log *slog.Logger, st *counters) *settler {
	return &settler{mb: mb, window: window, log: log, st: st, ctx: ctx}
}

func (s *settler) ack(m *sqsloop.Message)                   { s.add(settlement{m: m, delay: -1}) }
func (s *settler) nack(m *sqsloop.Message, d time.Duration) { s.add(settlement{m: m, delay: d}) }

func (s *settler) add(e settlement) {
	s.mu.Lock()
	buf := &s.nacks
	if e.delay < 0 {
		buf = &s.acks
	}
	*buf = append(*buf, e)
	var full []settlement
	if len(*buf) == sqsloop.MaxBatchSize {
		full, *buf = *buf, nil
		s.calls.Add(1)
	} else if s.timer == nil {
		s.calls.Add(1) // released by the timer's run, or by close if it stops it
		s.timer = time.AfterFunc(s.window, s.flushTimer)
	}
	s.mu.Unlock()
	if full != nil {
		go func() {
			defer s.calls.Done()
			s.send(full, e.delay < 0)
		}()
	}
}

// flushTimer sends whatever waits when the window ends.
func (s *settler) flushTimer() {
	defer s.calls.Done()
	s.mu.Lock()
	acks, nacks := s.acks, s.nacks
	s.acks, s.nacks, s.timer = nil, nil, nil
	s.mu.Unlock()
	s.send(acks, true)
	s.send(nacks, false)
}

// close sends what waits at once and returns when every call is done. No
// add may follow.
func (s *settler) close() {
	s.mu.Lock()
	if s.timer != nil && s.timer.Stop() {
		s.calls.Done() // the timer will not run
	}
	acks, nacks := s.acks, s.nacks
	s.acks, s.nacks, s.timer = nil, nil, nil
	s.mu.Unlock()
	s.send(acks, true)
	s.send(nacks, false)
	s.calls.Wait()
}

// send makes one batch call and accounts for every entry.
func (s *settler) send(b []settlement, ack bool) {
	if len(b) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, settleCallTimeout)
	defer cancel()
	var errs []error
	var err error
	if ack {
		handles := make([]string, len(b))
		for i, e := range b {
			handles[i] = e.m.ReceiptHandle
		}
		errs, err = s.mb.Delete(ctx, handles)
	} else {
		changes := make([]sqsloop.VisibilityChange, len(b))
		for i, e := range b {
			changes[i] = sqsloop.VisibilityChange{ReceiptHandle: e.m.ReceiptHandle, Timeout: e.delay}
		}
		errs, err = s.mb.ChangeVisibility(ctx, changes)
	}
	for i, e := range b {
		s.account(e, ack, entryError(errs, err, i))
	}
}

// errNoResult is the error of a batch entry the mailbox gave no result for.
var errNoResult = errors.New("consumer: no result for entry")

// entryError is entry i's outcome of a batch call that returned errs and
// err: the call's error if it failed as a whole, else the entry's own.
func entryError(errs []error, err error, i int) error {
	switch {
	case err != nil:
		return err
	case i < len(errs):
		return errs[i]
	}
	return errNoResult
}

func (s *settler) account(e settlement, ack bool, err error) {
	switch {
	case err == nil && ack:
		s.st.acked.Add(1)
	case err == nil:
		s.st.nacked.Add(1)
	case ack:
		s.st.ackFailed.Add(1)
		level := slog.LevelError
		if errors.Is(err, sqsloop.ErrReceiptHandleExpired) {
			level = slog.LevelWarn // the lease was lost: the message will be delivered again
		}
		s.log.Log(context.Background(), level, "consumer: ack failed; the message may be delivered again",
			slog.String("message_id", e.m.ID), slog.Any("error", err))
	default:
		s.st.nackFailed.Add(1)
		s.log.Warn("consumer: nack failed; the message becomes visible when its lease ends",
			slog.String("message_id", e.m.ID), slog.Any("error", err))
	}
}
