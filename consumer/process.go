package consumer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// sequence is what one handler goroutine works through in order: one
// message on a standard queue, or the messages of one FIFO message group
// that a receive returned together (SQS keeps their order; so must we).
// Its leases are held from the moment it arrives: while it waits for a
// handler (the receive-ahead buffer), and while its messages wait behind
// the first; when shutdown begins, what has not started is given back at
// once.
type sequence struct {
	msgs    []*sqsloop.Message
	leases  []*leases.Lease
	hb      *heartbeat.Heartbeat // shared by the messages, beaten by their handlers; made when it starts
	cur     leases.Current       // the lease of the message running now (sqsloop.LeaseFromContext)
	ctx     context.Context      // the handlers' context, carrying cur
	ctxs    []context.Context    // per message, with Visibility.CancelOnLeaseLost
	cancels []context.CancelCauseFunc
	run     *run // the handler run now, with Config.Observer (observe.go)

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

// arrive turns msgs, just received, into sequences and holds their leases:
// the lease owner keeps a message that waits for a handler alive (for at
// most one Extension after its receive) until its handler starts and
// beats. ctx is the handlers' context.
func (c *Consumer) arrive(ctx context.Context, msgs []*sqsloop.Message) []*sequence {
	seqs := sequences(msgs)
	held := make([]*leases.Lease, len(msgs)) // one allocation for the receive
	var runs []run
	if c.cfg.Observer != nil {
		runs = make([]run, len(seqs)) // one allocation for the receive
	}
	for i, s := range seqs {
		s.ctx = sqsloop.NewLeaseContext(ctx, &s.cur)
		if runs != nil {
			s.run = &runs[i]
		}
		s.leases, held = held[:len(s.msgs):len(s.msgs)], held[len(s.msgs):]
		for i, m := range s.msgs {
			var cancel context.CancelCauseFunc
			if c.cfg.Visibility.CancelOnLeaseLost {
				var mctx context.Context
				mctx, cancel = context.WithCancelCause(s.ctx)
				s.ctxs, s.cancels = append(s.ctxs, mctx), append(s.cancels, cancel)
			}
			s.leases[i] = c.leases.Hold(m, nil, cancel)
		}
	}
	return seqs
}

// giveBack gives back every message of s not started yet.
func (s *sequence) giveBack() {
	first, end := s.rest()
	for _, l := range s.leases[first:end] {
		l.GiveBack()
	}
}

// done ends the per-message contexts of s.
func (s *sequence) done() {
	for _, cancel := range s.cancels {
		cancel(nil)
	}
}

// sequences splits msgs into sequences: one per message group on a FIFO
// queue, one per message otherwise (rules.FIFO).
func sequences(msgs []*sqsloop.Message) []*sequence {
	// One allocation for every sequence of the receive (never more
	// sequences than messages, so the pointers stay valid).
	store := make([]sequence, 0, len(msgs))
	out := make([]*sequence, 0, len(msgs))
	add := func(i int) {
		store = append(store, sequence{msgs: msgs[i : i+1 : i+1]}) // capacity 1: an append copies
		out = append(out, &store[len(store)-1])
	}
	var index map[string]int
	for i, m := range msgs {
		if !rules.FIFO(m) {
			add(i)
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
		add(i)
	}
	return out
}

// process handles s's messages in order. They share one heartbeat: the
// running handler's beats, and each message finished, keep the waiting
// ones alive. If one fails, the rest of its group is given back
// unprocessed so that order holds; a waiting message whose lease was lost
// is left to its redelivery. A sequence that a worker takes once the drain
// has begun is given back whole, once no receive is in flight.
func (c *Consumer) process(s *sequence) {
	defer s.done()
	if c.state.Load() != stateRunning {
		// Received but not started when shutdown began. Given back while a
		// receive still waits in its long poll, it would be received by that
		// receive again, one more receive count for nothing.
		<-c.receivesOver
		s.giveBack()
		return
	}
	// The heartbeat and its context are made here, on the handler's
	// goroutine, not on the receive loop's.
	s.hb = heartbeat.New()
	hctx := heartbeat.NewContext(s.ctx, s.hb)
	for _, l := range s.leases {
		l.Start(s.hb)
	}
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
		if s.ctx.Err() != nil {
			lease.GiveBack() // the drain budget ran out before this one started
			continue
		}
		if lease.Begin() != nil {
			lease.GiveBack() // lapsed while waiting: nothing to give back, it ends the lease
			continue
		}
		mctx := hctx
		if s.ctxs != nil {
			mctx = heartbeat.NewContext(s.ctxs[i], s.hb)
		}
		s.cur.Set(lease)
		c.st.started.Add(1)
		c.st.running.Add(1)
		began := time.Now()
		if c.cfg.Observer != nil {
			mctx = c.processStart(mctx, s, m, began)
		}
		err := c.handler(mctx, m)
		took := time.Since(began)
		c.intake.handled(took)
		c.st.running.Add(-1)
		c.noteHandled()
		lost, neverBeat := lease.Returned() // before the beat below and the decision, which ends the lease
		s.hb.Beat()                         // a finished message is progress for the ones waiting
		var d failure
		if err == nil {
			c.st.succeeded.Add(1)
			lease.Ack()
		} else {
			d = c.failed(mctx, m, lease, err)
		}
		if c.cfg.Observer != nil {
			c.processEnd(mctx, s, rules.Run{Err: err, Took: took, LeaseLost: lost != nil, NeverBeat: neverBeat,
				DeadLettered: d.deadLettered, Delay: d.delay})
		}
		if err != nil {
			s.giveBack() // keep the group's order for the next receiver
		}
	}
}

// failed accounts for a handler's error (or panic) and decides its nack:
// after the delay the error asks for (sqsloop.NackAfter), else Backoff(receive
// count); at once when the drain interrupted it. A Permanent error sends
// the message to the dead-letter queue instead, when it can. It returns
// what it decided.
func (c *Consumer) failed(ctx context.Context, m *sqsloop.Message, lease *leases.Lease, err error) failure {
	c.st.failed.Add(1)
	panicked := rules.IsPanic(err)
	if panicked {
		c.st.panics.Add(1)
	}
	if errors.Is(context.Cause(ctx), ErrDrainTimeout) {
		lease.GiveBack() // interrupted by the drain, not failed
		return failure{}
	}
	if c.deadLetter(ctx, m, lease, err) { // Permanent: to the DLQ at once (poison.go)
		return failure{deadLettered: true}
	}
	delay := c.nackDelay(m, err)
	if !panicked && !errors.Is(err, sqsloop.ErrPermanent) { // a panic, a Permanent have lines of their own
		c.failures.Failed("consumer: handler failed; the message is nacked, to be received again after its back-off",
			m, err, duration("retry_in", delay))
	}
	lease.Nack(delay)
	return failure{delay: delay}
}

// failure is what failed decided about a failed run: moved to the
// dead-letter queue, or nacked after delay (0 and false: given back).
type failure struct {
	deadLettered bool
	delay        time.Duration
}

// nackDelay is the nack delay of m, whose handler failed with err: the
// delay err asks for (sqsloop.NackAfter), else Backoff(receive count).
func (c *Consumer) nackDelay(m *sqsloop.Message, err error) time.Duration {
	return rules.RetryDelay(err, m.ReceiveCount, c.cfg.Backoff)
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
