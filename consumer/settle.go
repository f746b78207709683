package consumer

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sqsloop/sqsloop"
)

// settleCallTimeout bounds one DeleteMessageBatch or
// ChangeMessageVisibilityBatch call of the settler.
const settleCallTimeout = 30 * time.Second

// maxParallelSettles bounds the settler's batch calls in flight at once.
const maxParallelSettles = 4

// settlement is one ack (delay < 0) or nack (delay ≥ 0) waiting for its batch.
type settlement struct {
	m     *sqsloop.Message
	delay time.Duration
}

// settler coalesces acks into DeleteMessageBatch calls and nacks into
// ChangeMessageVisibilityBatch calls: a batch goes out when it has 10
// entries or when its oldest entry has waited the window.
type settler struct {
	mb     sqsloop.Mailbox
	window time.Duration
	log    *slog.Logger
	st     *counters
	in     chan settlement
}

func newSettler(mb sqsloop.Mailbox, window time.Duration, log *slog.Logger, st *counters, buffer int) *settler {
	return &settler{mb: mb, window: window, log: log, st: st, in: make(chan settlement, buffer)}
}

func (s *settler) ack(m *sqsloop.Message)                   { s.in <- settlement{m: m, delay: -1} }
func (s *settler) nack(m *sqsloop.Message, d time.Duration) { s.in <- settlement{m: m, delay: d} }

// run settles until s.in is closed and drained, then waits for its calls.
// ctx carries values only: acks and nacks go out even while draining.
func (s *settler) run(ctx context.Context) {
	var g errgroup.Group
	g.SetLimit(maxParallelSettles)
	var acks, nacks []settlement
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var fire <-chan time.Time
	flush := func(batch *[]settlement, ack bool) {
		if len(*batch) == 0 {
			return
		}
		b := *batch
		*batch = nil
		g.Go(func() error { s.send(ctx, b, ack); return nil })
	}
	for {
		select {
		case op, ok := <-s.in:
			if !ok {
				flush(&acks, true)
				flush(&nacks, false)
				_ = g.Wait()
				return
			}
			if len(acks)+len(nacks) == 0 {
				timer.Reset(s.window)
				fire = timer.C
			}
			if op.delay < 0 {
				acks = append(acks, op)
				if len(acks) == sqsloop.MaxBatchSize {
					flush(&acks, true)
				}
			} else {
				nacks = append(nacks, op)
				if len(nacks) == sqsloop.MaxBatchSize {
					flush(&nacks, false)
				}
			}
		case <-fire:
			fire = nil
			flush(&acks, true)
			flush(&nacks, false)
		}
	}
}

// send makes one batch call and accounts for every entry.
func (s *settler) send(ctx context.Context, b []settlement, ack bool) {
	ctx, cancel := context.WithTimeout(ctx, settleCallTimeout)
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
		entryErr := err
		if entryErr == nil && i < len(errs) {
			entryErr = errs[i]
		} else if entryErr == nil {
			entryErr = errors.New("consumer: no result for entry")
		}
		s.account(e, ack, entryErr)
	}
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
