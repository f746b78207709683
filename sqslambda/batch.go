package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/internal/rules"
	"github.com/sqsloop/sqsloop/visibility"
)

// batch is one invocation's work: its records, their leases, the
// sequences they run in, and what became of each.
type batch struct {
	h       *Handler
	recs    []events.SQSMessage
	msgs    []*sqsloop.Message
	leases  []*leases.Lease      // nil where the record's queue has no lease owner
	dead    []*rules.DeadLetters // the record's queue's dead-letter queue; nil where it has no lease owner (all: none has)
	ctxs    []context.Context    // each record's handler context, before its heartbeat
	cancels []context.CancelCauseFunc
	seqs    [][]int  // record indexes: one FIFO message group, or one record
	owners  []*owner // the invocation's lease owners, one per queue with a client
	lapsed  []bool   // records whose lease lapsed before the invocation began (never held); nil when none did

	hctx    context.Context // the handlers' context: ends at cut, with cause ErrDeadline
	stop    context.CancelFunc
	cut     time.Time     // no record starts from then on; zero without a deadline
	grace   time.Duration // how long after cut Handle waits for running handlers
	flushBy time.Time     // when the lease owners' flush ends: a quarter of the margin before the deadline; zero without one (then 1 s after the end)

	next     atomic.Int64 // the next sequence to run
	stopAll  atomic.Bool  // a FIFO failure stops the batch (Config.FIFOStopOnFailure)
	cutShort atomic.Bool  // a handler was cut short by the deadline

	runs []observedRun // with Config.Observer: each record's handler run, from ProcessStart on

	mu       sync.Mutex
	state    []recState
	firstErr error
	closed   bool           // the response is built: what comes later is ignored
	settling sync.WaitGroup // state changes whose consequences are being applied (see set)
}

// recState is what became of one record, as finish reads it.
type recState uint8

const (
	waiting   recState = iota // not started yet
	running                   // its handler runs
	processed                 // its handler succeeded, or failed with sqsloop.Permanent and its copy is in the DLQ
	failed                    // its handler failed, panicked, or was cut short; or not run: a FIFO failure before it, or its lease lapsed while it waited
	cutOff                    // not run: the deadline neared
)

// owner is one queue's lease owner for the length of an invocation.
type owner struct {
	m    *leases.Manager
	done chan struct{} // closed when its Run has returned
}

// newBatch prepares recs (each with a messageId) for an invocation that
// started at start: their Messages, their queues' lease owners (started)
// holding their leases, their contexts and sequences.
func (h *Handler) newBatch(ctx context.Context, recs []events.SQSMessage, start time.Time) *batch {
	n := len(recs)
	b := &batch{
		h: h, recs: recs,
		msgs: make([]*sqsloop.Message, n), leases: make([]*leases.Lease, n), ctxs: make([]context.Context, n),
		state: make([]recState, n),
	}
	if h.cfg.Observer != nil {
		b.runs = make([]observedRun, n)
	}
	var deadline time.Time
	if d, ok := ctx.Deadline(); ok {
		deadline = d
		margin := max(min(h.cfg.DeadlineMargin, d.Sub(start)/2), 0)
		b.cut, b.grace, b.flushBy = d.Add(-margin), margin/4, d.Add(-margin/4)
		b.hctx, b.stop = context.WithDeadlineCause(ctx, b.cut, ErrDeadline)
	} else {
		b.hctx, b.stop = context.WithCancel(ctx)
	}
	type queueRun struct {
		o    *owner // nil: no client
		vt   time.Duration
		dead *rules.DeadLetters
	}
	queues := map[string]queueRun{} // by eventSourceARN
	for i := range recs {
		r := &recs[i]
		qr, known := queues[r.EventSourceARN]
		if !known && h.cfg.OpenQueue != nil {
			st := h.state(r.EventSourceARN)
			if q, vt, ls := st.client(ctx, h, start, deadline); q != nil {
				if qr.o = h.startOwner(ctx, guard{q: q, s: st, log: h.cfg.Logger}, ls); qr.o != nil {
					b.owners = append(b.owners, qr.o)
					qr.vt, qr.dead = vt, st.dead // set with the client, never changed after
				}
			}
			queues[r.EventSourceARN] = qr
		}
		m := message(r, start, qr.vt)
		b.msgs[i] = m
		h.st.received.Add(1)
		if m.ReceiveCount > 1 {
			h.st.redelivered.Add(1)
		}
		b.ctxs[i] = b.hctx
		if qr.o == nil {
			continue
		}
		if !m.ReceivedAt.Add(qr.vt).After(start) {
			b.lapsedBeforeStart(i, start, qr.vt)
			continue
		}
		var cancel context.CancelCauseFunc
		if h.cfg.Visibility.CancelOnLeaseLost {
			b.ctxs[i], cancel = context.WithCancelCause(b.hctx)
			b.cancels = append(b.cancels, cancel)
		}
		b.leases[i] = qr.o.m.Hold(m, nil, cancel) // waits for its handler: kept alive for one Extension
		if b.dead == nil {
			b.dead = make([]*rules.DeadLetters, n)
		}
		b.dead[i] = qr.dead
	}
	b.seqs = sequences(b.msgs)
	return b
}

// lapsedBeforeStart marks record i, received vt or more before the
// invocation began at start, as lapsed: its lease is lost already
// (sqsloop.LostBeforeStart), so it is not held and will not run. The first
// of an invocation is logged at WARN.
func (b *batch) lapsedBeforeStart(i int, start time.Time, vt time.Duration) {
	m := b.msgs[i]
	if b.lapsed == nil {
		b.lapsed = make([]bool, len(b.msgs))
		b.h.cfg.Logger.Warn("sqslambda: a record was received a visibility timeout or more before the invocation began, so its lease had lapsed "+
			"before its handler could start: it is not run and is reported failed (the message is visible again, or was received by another invocation). "+
			"A throttled or delayed invocation, or an old event replayed (AWS's sample events carry a receive time of 2018); logged once per invocation",
			slog.String("message_id", m.ID), slog.String("event_source_arn", b.recs[i].EventSourceARN),
			slog.String("received_before", start.Sub(m.ReceivedAt).Round(time.Millisecond).String()), slog.String("visibility_timeout", vt.String()))
	}
	b.lapsed[i] = true
	b.h.st.lapsed.Add(1)
	if obs := b.h.cfg.Visibility.Observer; obs != nil {
		err := fmt.Errorf("sqslambda: lease of message %s lost: received %v before the invocation began, the visibility timeout is %v: %w: %w",
			m.ID, start.Sub(m.ReceivedAt).Round(time.Millisecond), vt, visibility.ErrLeaseLost, ErrLapsedBeforeStart)
		obs.LeaseLost(m, sqsloop.LeaseLostEvent{Reason: sqsloop.LostBeforeStart, Err: err})
	}
}

// startOwner starts a lease owner over mb for one invocation.
func (h *Handler) startOwner(ctx context.Context, mb leases.Mailbox, ls *leases.Lengths) *owner {
	m, err := leases.NewFor(mb, ls, h.cfg.Logger)
	if err != nil {
		// ls's Config passed Validate when the queue was checked: unreachable but
		// for a bug, and then the records run without a lease owner.
		h.cfg.Logger.Error("sqslambda: lease owner", slog.Any("error", err))
		return nil
	}
	o := &owner{m: m, done: make(chan struct{})}
	go func() {
		defer close(o.done)
		_ = m.Run(context.WithoutCancel(ctx)) // stopped by finish (Manager.Stop), not by the invocation's end
	}()
	return o
}

// sequences splits msgs, by index, into what runs in order on one
// goroutine: one FIFO message group in the event's order, or one record.
func sequences(msgs []*sqsloop.Message) [][]int {
	out := make([][]int, 0, len(msgs))
	groups := map[string]int{}
	for i, m := range msgs {
		if !rules.FIFO(m) {
			out = append(out, []int{i})
			continue
		}
		if j, ok := groups[m.MessageGroupID]; ok {
			out[j] = append(out[j], i)
			continue
		}
		groups[m.MessageGroupID] = len(out)
		out = append(out, []int{i})
	}
	return out
}

// run runs the sequences on at most Config.Concurrency goroutines and
// returns when they are done or, with a deadline, at the latest grace
// after the cut-off: handlers that ignore their ended context are then
// left behind (see finish), as the consumer's drain abandons them.
func (b *batch) run() {
	n := min(b.h.cfg.Concurrency, len(b.seqs))
	done := make(chan struct{})
	var left atomic.Int64
	left.Store(int64(n))
	for range n {
		go func() {
			b.work()
			if left.Add(-1) == 0 {
				close(done)
			}
		}()
	}
	if b.cut.IsZero() {
		<-done
		return
	}
	t := time.NewTimer(time.Until(b.cut.Add(b.grace)))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// work runs sequences until none is left.
func (b *batch) work() {
	for {
		i := int(b.next.Add(1) - 1)
		if i >= len(b.seqs) {
			return
		}
		b.sequence(b.seqs[i])
	}
}

// sequence runs the records idx in order, sharing one heartbeat as the
// consumer's sequences do: the running handler's beats, and each record
// finished, keep the waiting ones' leases alive. After a failure the rest
// of a FIFO group is not run, so that its order holds; a record moved to
// the dead-letter queue is processed, not failed, and its group goes on,
// as under a consumer (which acks it).
func (b *batch) sequence(idx []int) {
	hb := heartbeat.New()
	for _, i := range idx {
		if l := b.leases[i]; l != nil {
			l.Start(hb)
		}
	}
	groupFailed := false
	for _, i := range idx {
		switch {
		case groupFailed || (b.stopAll.Load() && rules.FIFO(b.msgs[i])):
			b.notRun(i, failed, &b.h.st.skipped)
		case b.pastCut():
			b.notRun(i, cutOff, &b.h.st.cutOff)
		case b.lapsed != nil && b.lapsed[i], b.leases[i] != nil && b.leases[i].Begin() != nil:
			b.notRun(i, failed, &b.h.st.cutOff) // lapsed before the invocation, or while it waited: it is visible, or delivered again, already
			groupFailed = true
		case !b.runOne(i, hb):
			groupFailed = true
			if b.h.cfg.FIFOStopOnFailure && rules.FIFO(b.msgs[i]) {
				b.stopAll.Store(true)
			}
		}
	}
}

// pastCut reports whether records may no longer start.
func (b *batch) pastCut() bool {
	return b.hctx.Err() != nil || (!b.cut.IsZero() && !time.Now().Before(b.cut))
}

// runOne runs record i's handler and settles its outcome, reporting both
// to the observer. It reports whether the record was processed: its
// handler succeeded, or failed with sqsloop.Permanent and the record was
// copied to the dead-letter queue (deadLetter).
func (b *batch) runOne(i int, hb *heartbeat.Heartbeat) bool {
	if !b.set(i, running) {
		return false
	}
	m := b.msgs[i]
	ctx := heartbeat.NewContext(b.ctxs[i], hb)
	if l := b.leases[i]; l != nil {
		var cur leases.Current // sqsloop.LeaseFromContext
		cur.Set(l)
		ctx = sqsloop.NewLeaseContext(ctx, &cur)
	}
	b.h.st.started.Add(1)
	if b.runs != nil {
		ctx = b.processStart(ctx, i)
	}
	b.settling.Done()
	err := b.h.handler(ctx, m)
	end := processed
	if err != nil {
		end = failed
	}
	if !b.set(i, end) {
		return err == nil // abandoned: finish reported it
	}
	defer b.settling.Done()
	run := b.ended(i, err) // as the run ended, before the beat below and the decision
	hb.Beat()              // a finished record is progress for the ones waiting (and for its own lease, through a copy to the DLQ)
	cutShort := err != nil && errors.Is(context.Cause(ctx), ErrDeadline)
	if cutShort {
		b.cutShort.Store(true)
	}
	var (
		delay time.Duration // the retry delay of a failed run, drawn once
		dead  bool          // copied to the dead-letter queue
	)
	if err != nil && !cutShort {
		if dead = b.deadLetter(ctx, i, err); dead {
			b.settle(i, processed)
		} else {
			delay = rules.RetryDelay(err, m.ReceiveCount, b.h.cfg.Backoff)
		}
	}
	if b.runs != nil {
		run.CutShort, run.DeadLettered, run.Delay = cutShort, dead, delay
		b.processEnd(i, run)
	}
	return b.decide(i, err, cutShort, dead, delay)
}

// decide counts the end of record i's handler run, which returned err (cut
// short by the deadline: cutShort; copied to the dead-letter queue: dead;
// else failed: retried after delay), and tells its lease owner what became
// of it. It reports whether the record was processed.
func (b *batch) decide(i int, err error, cutShort, dead bool, delay time.Duration) bool {
	l := b.leases[i]
	if err != nil {
		b.h.st.failed.Add(1)
		if rules.IsPanic(err) {
			b.h.st.panics.Add(1)
		}
		b.noteErr(err)
	}
	if err == nil || dead {
		if err == nil {
			b.h.st.succeeded.Add(1)
		}
		if l != nil && l.Err() != nil {
			b.h.st.lateAcked.Add(1)
		} else {
			b.h.st.acked.Add(1)
		}
		if l != nil {
			l.Release() // the event source mapping deletes it
		}
		return true
	}
	if cutShort {
		if l != nil {
			l.GiveBack() // cut short by the deadline, not failed: at once
		}
		return false
	}
	if !rules.IsPanic(err) && !errors.Is(err, sqsloop.ErrPermanent) { // a panic, a Permanent have lines of their own
		if l != nil {
			b.h.failures.Failed("sqslambda: handler failed; the record is reported failed, to be received again after its back-off",
				b.msgs[i], err, slog.String("retry_in", delay.String()))
		} else {
			b.h.failures.Failed("sqslambda: handler failed; the record is reported failed, to be received again when the queue's visibility timeout ends",
				b.msgs[i], err)
		}
	}
	if l != nil {
		l.Nack(delay)
	}
	return false
}

// notRun settles record i, never started, as s (failed or cutOff),
// counts it in count (Stats.Skipped or Stats.CutOff), and gives it back at
// once.
func (b *batch) notRun(i int, s recState, count *atomic.Int64) {
	if !b.set(i, s) {
		return
	}
	defer b.settling.Done()
	count.Add(1)
	if l := b.leases[i]; l != nil {
		l.GiveBack()
	}
}

// settle changes the state of record i, which set made count and whose
// consequences are being applied, to s.
func (b *batch) settle(i int, s recState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state[i] = s
}

// set records s as record i's state and reports whether it counts: not
// once the response is built (finish). When it counts, the caller applies
// what follows from s (counters, the lease's decision, the observer's
// event) and then calls b.settling.Done(); finish waits for that before it
// reads the states, so that the response, the counters, the decisions sent
// and the events agree about every record.
func (b *batch) set(i int, s recState) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.state[i] = s
	b.settling.Add(1)
	return true
}

// noteErr keeps the batch's first handler error.
func (b *batch) noteErr(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.firstErr == nil {
		b.firstErr = err
	}
}

// finish closes the batch once run has returned: records still running are
// abandoned (reported failed, their leases released: they stay hidden
// while their handlers may still run; their runs reported abandoned to the
// observer) and those never reached are cut off (given back); the lease
// owners stop, after sending what was decided until a quarter of the
// margin before the deadline. It returns the batch item
// failures, in the event's order, each message ID once, whether the batch
// failed whole (no record processed, handlers failed, and the deadline cut
// none short or off: see Config.NoErrorWhenAllFail), and the first handler
// error.
func (b *batch) finish() ([]events.SQSBatchItemFailure, bool, error) {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.settling.Wait()                      // the state changes made before closed: applied
	state, firstErr := b.state, b.firstErr // no longer changed

	var abandoned, cut int
	for i, s := range state {
		l := b.leases[i]
		switch s {
		case running:
			abandoned++
			if l != nil {
				l.Release()
			}
			if b.runs != nil {
				b.observeAbandoned(i)
			}
		case waiting:
			cut++
			if l != nil {
				l.GiveBack()
			}
		}
	}
	b.h.st.abandoned.Add(int64(abandoned))
	b.h.st.cutOff.Add(int64(cut))
	// The flush ends a quarter of the margin before the deadline; without
	// one (not on Lambda), after 1 s, the consumer's bound: a call that
	// hangs never holds Handle for good.
	flushBy := b.flushBy
	if flushBy.IsZero() {
		flushBy = time.Now().Add(time.Second)
	}
	flush, cancel := context.WithDeadline(context.Background(), flushBy)
	defer cancel()
	for _, o := range b.owners {
		_ = o.m.Stop(flush) // what it could not send by then is logged, and counted in NackFailed
		<-o.done
		b.h.st.addLeases(o.m.Stats())
	}
	b.stop()
	for _, cancel := range b.cancels {
		cancel(nil)
	}

	var failures []events.SQSBatchItemFailure
	seen := make(map[string]bool)
	allFailed := true
	for i, s := range state {
		switch s {
		case processed:
			allFailed = false
			continue
		case cutOff:
			cut++
		}
		if id := b.recs[i].MessageId; !seen[id] {
			seen[id] = true
			failures = append(failures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
	}
	b.h.st.itemFailures.Add(int64(len(failures)))
	allFailed = allFailed && firstErr != nil && abandoned == 0 && cut == 0 && !b.cutShort.Load()
	if abandoned > 0 || cut > 0 {
		b.h.cfg.Logger.Warn("sqslambda: the invocation's deadline was near; records reported failed without finishing",
			slog.Int("abandoned", abandoned), slog.Int("not_started", cut), slog.Int("records", len(state)))
	}
	return failures, allFailed, firstErr
}
