package leases

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
	"github.com/sqsloop/sqsloop/visibility"
)

// callKind is what a batch call does.
type callKind uint8

const (
	extendCall callKind = iota // ChangeMessageVisibilityBatch to keep messages hidden
	deleteCall                 // DeleteMessageBatch: acks
	changeCall                 // ChangeMessageVisibilityBatch: nacks and give-backs
)

// call is one batch call of at most MaxBatchSize entries: the leases it is
// about and, for visibility changes, the timeout each asks for. Calls are
// reused (newCall, recycle), with room for a full batch in every slice, so
// the hot path allocates none.
type call struct {
	kind     callKind
	leases   []*Lease
	timeouts []time.Duration
	sentAt   time.Time
	errs     []error // one per entry, filled by send

	leaseBuf   [sqsloop.MaxBatchSize]*Lease
	timeoutBuf [sqsloop.MaxBatchSize]time.Duration
	errBuf     [sqsloop.MaxBatchSize]error
	handles    [sqsloop.MaxBatchSize]string
	changes    [sqsloop.MaxBatchSize]sqsloop.VisibilityChange
	entries    [sqsloop.MaxBatchSize]sqsloop.SettleEntry // the observer's event
}

// newCall returns an empty call of kind, made at now: a recycled one if
// there is one. Called with m.mu held.
func (m *Manager) newCall(kind callKind, now time.Time) *call {
	var c *call
	if n := len(m.spare); n > 0 {
		c, m.spare = m.spare[n-1], m.spare[:n-1]
	} else {
		c = new(call)
	}
	c.kind, c.sentAt = kind, now
	c.leases, c.timeouts, c.errs = c.leaseBuf[:0], c.timeoutBuf[:0], c.errBuf[:0]
	return c
}

// add puts l in c, asking for timeout (visibility changes only). Called
// with m.mu held.
func (m *Manager) add(c *call, l *Lease, timeout time.Duration) {
	l.busy = true
	m.wire++
	c.leases = append(c.leases, l)
	c.timeouts = append(c.timeouts, timeout)
}

// recycle keeps c, whose outcome has been applied, for a later call.
// Called with m.mu held.
func (m *Manager) recycle(c *call) {
	clear(c.leaseBuf[:])
	clear(c.errBuf[:])
	clear(c.handles[:])
	clear(c.changes[:])
	clear(c.entries[:])
	m.spare = append(m.spare, c)
}

// plan takes what is due at now out of the heap and the queues and
// returns the calls to make. Flushing (Run's context is done) sends every
// decided call at once and extends nothing. Called with m.mu held.
func (m *Manager) plan(now time.Time) []*call {
	flushing := m.flushing
	var out []*call
	if flushing {
		m.dueDecisions(now)
	} else {
		out = m.extensions(now)
	}
	out = m.batches(out, deleteCall, &m.acks, &m.acksAt, now, flushing)
	out = m.batches(out, changeCall, &m.nacks, &m.nacksAt, now, flushing)
	m.checkIdle()
	return out
}

// nextWake is when the loop must look again: the next lease due, or the
// end of a batch window; zero when nothing waits. Called with m.mu held.
func (m *Manager) nextWake() time.Time {
	flushing := m.flushing
	var next time.Time
	earlier := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if len(m.leases) > 0 && !flushing {
		earlier(m.leases[0].due)
	}
	if flushing {
		for _, l := range m.leases {
			if l.decided != holding {
				earlier(l.due)
			}
		}
	}
	if len(m.acks) > 0 {
		earlier(m.acksAt.Add(ackWindow))
	}
	if len(m.nacks) > 0 {
		earlier(m.nacksAt.Add(ackWindow))
	}
	return next
}

// errNoResult is the error of a batch entry the mailbox gave no result for.
var errNoResult = errors.New("visibility: no result for entry")

// send makes c's batch call and records one error per entry. It runs on a
// sender goroutine and reads only what does not change while c is on the
// wire.
func (m *Manager) send(ctx context.Context, c *call) {
	ctx, cancel := context.WithTimeout(ctx, min(m.cfg.Interval/2, maxCallTimeout))
	defer cancel()
	// Timed only for the observer, or for the DEBUG record of an extension.
	observing := m.obs != nil || (c.kind == extendCall && m.log.Enabled(ctx, slog.LevelDebug))
	var start time.Time
	if observing {
		start = time.Now()
	}
	var errs []error
	var err error
	n := len(c.leases)
	if c.kind == deleteCall {
		for i, l := range c.leases {
			c.handles[i] = l.msg.ReceiptHandle
		}
		errs, err = m.mb.Delete(ctx, c.handles[:n:n])
	} else {
		for i, l := range c.leases {
			c.changes[i] = sqsloop.VisibilityChange{ReceiptHandle: l.msg.ReceiptHandle, Timeout: c.timeouts[i]}
		}
		errs, err = m.mb.ChangeVisibility(ctx, c.changes[:n:n])
	}
	c.errs = c.errBuf[:n]
	for i := range c.errs {
		switch {
		case err != nil:
			c.errs[i] = err
		case i < len(errs):
			c.errs[i] = errs[i]
		default:
			c.errs[i] = errNoResult
		}
	}
	if observing {
		m.observe(c, start, time.Since(start), err)
	}
}

// apply records the outcome of c at now. Called with m.mu held, on Run's
// goroutine.
func (m *Manager) apply(c *call, now time.Time) {
	switch c.kind {
	case extendCall:
		m.st.extendCalls.Add(1)
		m.st.largest.Store(max(m.st.largest.Load(), int64(len(c.leases))))
	case deleteCall:
		m.st.deleteCalls.Add(1)
	default:
		m.st.changeCalls.Add(1)
	}
	m.countDenied(c)
	m.wire -= len(c.leases)
	for i, l := range c.leases {
		l.busy = false
		switch c.kind {
		case extendCall:
			m.applyExtension(l, c.timeouts[i], c.errs[i], c.sentAt, now)
		case deleteCall:
			m.applyAck(l, c.errs[i], c.sentAt, now)
		default:
			m.applyNack(l, c.errs[i], now)
		}
	}
	m.checkIdle()
}

// countDenied keeps the count of consecutive calls of c's kind denied
// access, and gives up at MaxAccessDenied; a queue that is gone or a
// closed mailbox gives up at once. Called with m.mu held.
func (m *Manager) countDenied(c *call) {
	kind := 0
	if c.kind != deleteCall {
		kind = 1
	}
	var denied error // the first entry denied access
	ok := false
	for _, err := range c.errs {
		switch f := rules.FaultOf(err); {
		case err == nil:
			ok = true
		case f == rules.Denied:
			if denied == nil {
				denied = err
			}
		case f == rules.QueueGone:
			m.giveUp(fmt.Errorf("visibility: %w", err))
		}
	}
	switch {
	case ok:
		m.denied[kind] = 0
	case denied != nil:
		m.denied[kind]++
		if m.denied[kind] >= visibility.MaxAccessDenied {
			op := [2]string{"DeleteMessageBatch", "ChangeMessageVisibilityBatch"}[kind]
			m.giveUp(fmt.Errorf("visibility: %d %s calls in a row denied: %w", m.denied[kind], op, denied))
		}
	}
}

// senders runs the batch calls on a fixed set of goroutines, never more
// than maxCalls at once; calls beyond that wait in order. Only Run's
// goroutine uses a senders' methods.
type senders struct {
	m        *Manager
	work     chan *call
	results  chan *call
	wg       sync.WaitGroup
	inflight int
	waiting  []*call
}

// startSenders starts maxCalls goroutines that make the calls queued, with
// ctx; stop ends them and waits for them.
func startSenders(m *Manager, ctx context.Context) *senders {
	s := &senders{m: m, work: make(chan *call), results: make(chan *call, maxCalls)}
	s.wg.Add(maxCalls)
	for range maxCalls {
		go func() {
			defer s.wg.Done()
			for c := range s.work {
				m.send(ctx, c)
				s.results <- c
			}
		}()
	}
	return s
}

// queue sends calls, as many as there is room for, in order.
func (s *senders) queue(calls []*call) {
	s.waiting = append(s.waiting, calls...)
	for s.inflight < maxCalls && len(s.waiting) > 0 {
		c := s.waiting[0]
		s.waiting[0] = nil
		s.waiting = s.waiting[1:]
		s.inflight++
		s.work <- c
	}
}

// returned applies a call's outcome and sends a waiting call in its place.
func (s *senders) returned(c *call) {
	s.inflight--
	s.m.mu.Lock()
	s.m.apply(c, time.Now())
	s.m.recycle(c)
	s.m.mu.Unlock()
	s.queue(nil)
}

func (s *senders) idle() bool { return s.inflight == 0 && len(s.waiting) == 0 }

// stop waits for the calls on the wire (their context is cancelled by
// then), applies their outcomes, and ends the goroutines. Calls still
// waiting are never sent.
func (s *senders) stop() {
	waiting := s.waiting
	s.waiting = nil
	for s.inflight > 0 {
		c := <-s.results
		s.inflight--
		s.m.mu.Lock()
		s.m.apply(c, time.Now())
		s.m.recycle(c)
		s.m.mu.Unlock()
	}
	close(s.work)
	s.wg.Wait()
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	for _, c := range waiting {
		s.m.wire -= len(c.leases)
		for _, l := range c.leases {
			l.busy = false
			s.m.leases.Push(l) // not in heap order: abandon only counts them
		}
	}
}
