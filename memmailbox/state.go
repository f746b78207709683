package memmailbox

import (
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
)

// queueState is one queue's messages. Every field below mu is guarded by it.
// Messages move between three places: visible (standard: the visible list,
// by when each turned visible, then send order; FIFO: their group's list,
// the group in ready by its oldest message), in flight (the
// inflight heap, by visibility deadline) and delayed (the delayed heap, by the
// end of the delay). A FIFO record stays in its group's list from send to
// delete, whatever its state, which keeps the group's order.
type queueState struct {
	name string
	cfg  sqsloop.QueueSpec // with defaults applied (WithDefaults)
	dlq  *queueState       // nil without a redrive policy

	mu       sync.Mutex
	closed   bool          // by Broker.Close
	done     chan struct{} // closed by Broker.Close
	wake     chan struct{} // closed and replaced when waiters should look again
	waiters  int           // long polls waiting on wake
	visible  recList       // standard queue: visible messages, by when each turned visible (due), then send order
	groups   map[string]*group
	ready    groupHeap // FIFO: receivable groups, by their oldest message
	inflight timeHeap
	delayed  timeHeap
	handles  map[string]*record // newest receipt handle -> its message
	nVisible int
	dedup    dedupWindow
	sent     uint64 // messages enqueued: the next record.order
	ids      idGen
	stats    Stats // cumulative counters; gauges are filled in by snapshot
}

func newQueueState(cfg sqsloop.QueueSpec, dlq *queueState) *queueState {
	s := &queueState{
		name:    cfg.Name,
		cfg:     cfg,
		dlq:     dlq,
		done:    make(chan struct{}),
		wake:    make(chan struct{}),
		handles: make(map[string]*record),
		ids:     newIDGen(),
	}
	if cfg.FIFO {
		s.groups = make(map[string]*group)
	}
	return s
}

// close marks the queue closed and releases its long polls. Idempotent.
func (s *queueState) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

// signal wakes every waiting long poll, so it looks at the queue again: a
// message may have become receivable, or the next due time moved earlier.
func (s *queueState) signal() {
	if s.waiters > 0 {
		close(s.wake)
		s.wake = make(chan struct{})
	}
}

// sweep makes visible every in-flight message whose visibility deadline has
// passed and every delayed message whose delay has ended, as of now. It pops
// only what is due, earliest first.
func (s *queueState) sweep(now time.Time) {
	for r := s.inflight.peek(); r != nil && !r.due.After(now); r = s.inflight.peek() {
		s.inflight.pop()
		s.stats.ExpiredFound++
		s.stats.Returned++
		s.reveal(r)
	}
	for r := s.delayed.peek(); r != nil && !r.due.After(now); r = s.delayed.peek() {
		s.delayed.pop()
		s.reveal(r)
	}
}

// nextDue returns the earliest time an in-flight or delayed message turns
// visible, if any.
func (s *queueState) nextDue() (time.Time, bool) {
	a, b := s.inflight.peek(), s.delayed.peek()
	switch {
	case a == nil && b == nil:
		return time.Time{}, false
	case a == nil:
		return b.due, true
	case b == nil || a.due.Before(b.due):
		return a.due, true
	default:
		return b.due, true
	}
}

// reveal makes r visible; r.due says since when (a deadline or a delay
// that ended, or now). r is new, or has just left the inflight or delayed
// heap.
func (s *queueState) reveal(r *record) {
	was := r.st
	r.st = stVisible
	s.nVisible++
	if !s.cfg.FIFO {
		s.visible.insertByDue(r)
		s.signal()
		return
	}
	if was == stInflight {
		r.g.inflight--
	}
	s.groupChanged(r.g)
}

// groupChanged puts g in or out of the ready list after its messages
// changed, and forgets it once it is empty.
func (s *queueState) groupChanged(g *group) {
	ok := g.receivable()
	switch {
	case ok && !g.ready:
		s.ready.push(g)
		s.signal()
	case !ok && g.ready:
		s.ready.remove(g)
	}
	if g.msgs.n == 0 {
		delete(s.groups, g.id)
	}
}

// hide puts r in flight for vt from now, with a new receipt handle.
func (s *queueState) hide(r *record, vt time.Duration, now time.Time) {
	r.count++
	if r.firstRcv.IsZero() {
		r.firstRcv = now
	}
	if r.handle != "" {
		delete(s.handles, r.handle)
	}
	r.handle = s.ids.receiptHandle()
	s.handles[r.handle] = r
	r.receivedAt = now
	r.st = stInflight
	r.due = now.Add(vt)
	s.nVisible--
	if s.cfg.FIFO {
		r.g.inflight++
	}
	if s.inflight.push(r) {
		s.signal() // the next due time moved earlier
	}
	s.stats.Received++
}

// unlink takes r out of the queue, wherever it is, and forgets its receipt
// handle. The caller counts it as deleted or dead-lettered.
func (s *queueState) unlink(r *record) {
	if r.handle != "" {
		delete(s.handles, r.handle)
		r.handle = ""
	}
	switch r.st {
	case stInflight:
		s.inflight.remove(r)
		if s.cfg.FIFO {
			r.g.inflight--
		}
	case stDelayed:
		s.delayed.remove(r)
	case stVisible:
		s.nVisible--
		if !s.cfg.FIFO {
			s.visible.remove(r)
		}
	}
	r.st = stGone
	if s.cfg.FIFO {
		g := r.g
		g.msgs.remove(r)
		r.g = nil
		s.groupChanged(g)
	}
}

// enqueue adds r, sent now, to the queue: visible at once, or after delay.
func (s *queueState) enqueue(r *record, delay time.Duration, now time.Time) {
	s.sent++
	r.order = s.sent
	if s.cfg.FIFO {
		r.seq = fmtSeq(r.order)
		g := s.groups[r.group]
		if g == nil {
			g = &group{id: r.group}
			s.groups[r.group] = g
		}
		r.g = g
		g.msgs.pushBack(r)
	}
	if delay > 0 {
		r.st = stDelayed
		r.due = now.Add(delay)
		if s.delayed.push(r) {
			s.signal()
		}
		return
	}
	r.due = now
	s.reveal(r)
}

// acceptDeadLetters enqueues records moved here from a queue whose DLQ this
// is. Like SQS, a moved message keeps its ID, sent time and approximate
// receive count; it is visible at once.
func (s *queueState) acceptDeadLetters(rs []*record) {
	if len(rs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for _, r := range rs {
		r.st = stNew
		r.receivedAt, r.due = time.Time{}, time.Time{}
		s.enqueue(r, 0, now)
		s.stats.DeadLetteredIn++
	}
}

// attributes returns the queue's configuration as QueueAttributes report
// it, without the approximate counts. The configuration never changes, so
// s.mu need not be held.
func (s *queueState) attributes() sqsloop.QueueAttributes {
	a := sqsloop.QueueAttributes{
		VisibilityTimeout:         s.cfg.VisibilityTimeout,
		Delay:                     s.cfg.Delay,
		RetentionPeriod:           s.cfg.RetentionPeriod,
		MaxMessageSize:            s.cfg.MaxMessageSize,
		MaxReceiveCount:           s.cfg.MaxReceiveCount,
		FIFO:                      s.cfg.FIFO,
		ContentBasedDeduplication: s.cfg.ContentBasedDeduplication,
	}
	if s.dlq != nil {
		a.DeadLetterQueue = s.dlq.name
	}
	return a
}

// snapshot returns the counters, with the gauges filled in.
func (s *queueState) snapshot() Stats {
	st := s.stats
	st.Visible = s.nVisible
	st.InFlight = len(s.inflight)
	st.Delayed = len(s.delayed)
	return st
}

// fmtSeq formats a FIFO sequence number like SQS: a 20-digit decimal, so that
// sequence numbers also sort as strings.
func fmtSeq(n uint64) string {
	var buf [20]byte
	for i := len(buf) - 1; i >= 0; i-- {
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return string(buf[:])
}
