package consumer

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// sequence is what one handler goroutine works through in order: one
// message on a standard queue, or the messages of one FIFO message group
// that a receive returned together (SQS keeps their order; so must we). The
// messages waiting behind the first keep their leases meanwhile, and when
// shutdown begins they are given back at once.
type sequence struct {
	msgs   []*sqsloop.Message
	leases []*visibility.Lease

	mu   sync.Mutex
	next int // messages before next were started or given back
}

// take returns the index of the next message to start; ok is false when
// none is left.
func (s *sequence) take() (i int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.msgs) {
		return 0, false
	}
	s.next++
	return s.next - 1, true
}

// rest closes the sequence and returns the indexes of the messages not
// started.
func (s *sequence) rest() (first, end int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	first, end = s.next, len(s.msgs)
	s.next = end
	return first, end
}

// sequences splits msgs into sequences: one per message group on a FIFO
// queue, one per message otherwise (a standard queue's MessageGroupId, for
// fair queues, orders nothing). SQS marks FIFO messages with a
// SequenceNumber.
func sequences(msgs []*sqsloop.Message) []*sequence {
	out := make([]*sequence, 0, len(msgs))
	var index map[string]int
	for i, m := range msgs {
		if m.MessageGroupID == "" || m.Attributes[sqsloop.AttrSequenceNumber] == "" {
			out = append(out, &sequence{msgs: msgs[i : i+1 : i+1]}) // capacity 1: an append copies
			continue
		}
		if index == nil {
			index = map[string]int{}
		}
		if j, ok := index[m.MessageGroupID]; ok {
			out[j].msgs = append(out[j].msgs, m)
			continue
		}
		index[m.MessageGroupID] = len(out)
		out = append(out, &sequence{msgs: msgs[i : i+1 : i+1]})
	}
	return out
}

// process handles s's messages in order. They share one heartbeat: the
// running handler's beats, and each message finished, keep the waiting
// ones alive. If one fails, the rest of its group is given back
// unprocessed so that order holds; a waiting message whose lease was lost
// is left to its redelivery.
func (c *Consumer) process(ctx context.Context, s *sequence) {
	hb := heartbeat.New()
	hctx := heartbeat.NewContext(ctx, hb)
	s.leases = make([]*visibility.Lease, 0, len(s.msgs))
	var cancels []context.CancelCauseFunc
	var ctxs []context.Context
	for _, m := range s.msgs {
		var cancel context.CancelCauseFunc
		if c.cfg.Visibility.CancelOnLeaseLost {
			var mctx context.Context
			mctx, cancel = context.WithCancelCause(hctx)
			ctxs, cancels = append(ctxs, mctx), append(cancels, cancel)
		}
		s.leases = append(s.leases, c.leases.Hold(m, hb, cancel))
	}
	defer func() {
		for _, cancel := range cancels {
			cancel(nil)
		}
	}()
	if len(s.msgs) > 1 {
		c.waiting.add(s)
		defer c.waiting.remove(s)
	}
	for {
		i, ok := s.take()
		if !ok {
			return
		}
		m, lease := s.msgs[i], s.leases[i]
		if i > 0 && lease.Err() != nil {
			lease.GiveBack() // lapsed while waiting: nothing to give back, it ends the lease
			continue
		}
		if ctx.Err() != nil {
			lease.GiveBack() // the drain budget ran out before this one started
			continue
		}
		mctx := hctx
		if ctxs != nil {
			mctx = ctxs[i]
		}
		c.st.started.Add(1)
		c.st.running.Add(1)
		err := c.handler(mctx, m)
		c.st.running.Add(-1)
		hb.Beat() // a finished message is progress for the ones waiting
		if err == nil {
			c.st.succeeded.Add(1)
			lease.Ack()
			continue
		}
		c.failed(mctx, m, lease, err)
		if first, end := s.rest(); first < end {
			for _, l := range s.leases[first:end] {
				l.GiveBack() // keep the group's order for the next receiver
			}
		}
	}
}

// failed accounts for a handler's error (or panic) and decides its nack:
// after the delay the error asks for (NackAfter), else Backoff(receive
// count); at once when the drain interrupted it.
func (c *Consumer) failed(ctx context.Context, m *sqsloop.Message, lease *visibility.Lease, err error) {
	c.st.failed.Add(1)
	var pe *panicError
	if errors.As(err, &pe) {
		c.st.panics.Add(1)
	}
	if errors.Is(context.Cause(ctx), ErrDrainTimeout) {
		lease.GiveBack() // interrupted by the drain, not failed
		return
	}
	delay := c.cfg.Backoff(m.ReceiveCount)
	var ne *nackError
	if errors.As(err, &ne) {
		delay = ne.delay
	}
	c.cfg.Logger.Debug("consumer: handler failed; nacking", slog.String("message_id", m.ID),
		slog.Duration("delay", delay), slog.Any("error", err))
	lease.Nack(delay)
}

// waiting tracks the sequences with messages waiting behind a running
// one, so the drain can give those back at once.
type waiting struct {
	mu  sync.Mutex
	seq map[*sequence]struct{}
}

func (w *waiting) add(s *sequence) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seq == nil {
		w.seq = map[*sequence]struct{}{}
	}
	w.seq[s] = struct{}{}
}

func (w *waiting) remove(s *sequence) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.seq, s)
}

// all returns the sequences tracked now.
func (w *waiting) all() []*sequence {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*sequence, 0, len(w.seq))
	for s := range w.seq {
		out = append(out, s)
	}
	return out
}
