package leases

import (
	"container/heap"
	"errors"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// batches appends to out the calls cut from the queue q of kind: every
// full batch, and the rest too when its window (opened at since) is over
// or all is set (flushing); a rest left after full batches were cut opens
// a new window. Called with m.mu held.
func (m *Manager) batches(out []*call, kind callKind, q *[]*Lease, since *time.Time, now time.Time, all bool) []*call {
	all = all || !now.Before(since.Add(ackWindow))
	rest := *q
	if len(rest) < sqsloop.MaxBatchSize && !all {
		return out // its window is still open: the rest waits for company
	}
	for len(rest) >= sqsloop.MaxBatchSize || (all && len(rest) > 0) {
		n := min(len(rest), sqsloop.MaxBatchSize)
		c := m.newCall(kind, now)
		for _, l := range rest[:n] {
			m.add(c, l, l.delay) // 0 but for a nack
		}
		clear(rest[:n])
		rest = rest[n:]
		out = append(out, c)
	}
	*q = append((*q)[:0], rest...)
	if len(rest) > 0 {
		*since = now
	}
	return out
}

// retryOrExtend handles a decided lease whose retry is due. It reports
// whether the lease must be extended first (an ack still failing while
// its deadline nears; never while flushing, nor after Interrupt);
// otherwise it has queued the retry, or ended the lease. Called with m.mu
// held, l in neither the heap nor a call.
func (m *Manager) retryOrExtend(l *Lease, now time.Time) bool {
	if !now.Before(l.deadline) {
		if l.decided == acking {
			m.markLost(l, l.endReason()) // its ack failed until the lease ended
		} else {
			m.st.nackFailed.Add(1) // visible again all the same
			m.finish(l)
			return false
		}
	}
	if l.decided == acking && l.lost == nil && !m.cfg.Disabled && !m.flushing && !m.stopped && l.deadline.Sub(now) <= m.cfg.Interval && !l.capped {
		return true
	}
	m.settle(l, now)
	return false
}

// dueDecisions queues, while flushing, the decided leases whose retry is
// due. Called with m.mu held.
func (m *Manager) dueDecisions(now time.Time) {
	var due []*Lease
	for _, l := range m.leases {
		if l.decided != holding && !l.due.After(now) {
			due = append(due, l)
		}
	}
	for _, l := range due {
		heap.Remove(&m.leases, l.index)
		m.retryOrExtend(l, now) // false: nothing is extended while flushing
	}
}

// settling reports whether a decided call waits to be sent or retried.
// Called with m.mu held.
func (m *Manager) settling() bool {
	if len(m.acks) > 0 || len(m.nacks) > 0 {
		return true
	}
	for _, l := range m.leases {
		if l.decided != holding {
			return true
		}
	}
	return false
}

// applyAck records the outcome of l's delete, sent at sentAt. Called with
// m.mu held.
func (m *Manager) applyAck(l *Lease, err error, sentAt, now time.Time) {
	switch {
	case err == nil && (l.late || l.lost != nil):
		m.st.lateAcked.Add(1)
		m.finish(l)
		return
	case err == nil:
		m.st.acked.Add(1)
		m.finish(l)
		return
	case rules.Permanent(err) && rules.FaultOf(err) != rules.Denied, l.late, l.lost != nil:
		m.st.ackFailed.Add(1)
		level := slog.LevelError
		if errors.Is(err, sqsloop.ErrReceiptHandleExpired) || l.lost != nil {
			level = slog.LevelWarn // the lease was lost: the message will be delivered again
		}
		m.noteFailure(level, "visibility: ack failed; the message may be delivered again", l, err)
		m.finish(l)
		return
	}
	// Transient (or access denied, which may still be propagating): keep
	// the lease alive and try again, looking at it by Interval/2 before its
	// deadline at the latest, as at a holding lease, so that an extension
	// sent then still lands (unless it can no longer be extended, or Run
	// is flushing and extends nothing: then the back-off stands). A delete
	// that was on the wire across that last look makes up for it at once;
	// one sent after it (the last look, or a retry) keeps its back-off, so
	// that calls failing at once (the endpoint down) are not tried again
	// in a loop until the deadline.
	m.st.ackRetries.Add(1)
	l.tries++
	l.due = now.Add(m.retryDelay(l.tries))
	if last := l.deadline.Add(-m.cfg.Interval / 2); !m.cfg.Disabled && !l.capped && !m.flushing && last.Before(l.due) && sentAt.Before(last) {
		l.due = last
		if l.due.Before(now) {
			l.due = now
		}
	}
	heap.Push(&m.leases, l)
}

// applyNack records the outcome of l's nack or give-back. Called with
// m.mu held.
func (m *Manager) applyNack(l *Lease, err error, now time.Time) {
	switch {
	case err == nil && l.decided == givenUp:
		m.st.givenBack.Add(1)
		m.finish(l)
		return
	case err == nil:
		m.st.nacked.Add(1)
		m.finish(l)
		return
	case !rules.Permanent(err) || rules.FaultOf(err) == rules.Denied:
		l.tries++
		if retry := now.Add(m.retryDelay(l.tries)); retry.Before(l.deadline) {
			l.due = retry
			heap.Push(&m.leases, l)
			return
		}
	}
	m.st.nackFailed.Add(1)
	m.noteFailure(slog.LevelWarn, "visibility: nack failed; the message becomes visible when its lease ends", l, err)
	m.finish(l)
}

// retryDelay is the back-off before the n-th retry of an ack or nack:
// 100 ms doubling, at most Interval/2 and at most 5 s. (An ack still
// failing is also looked at by Interval/2 before its deadline, whatever
// its back-off, so that its lease is extended in time.)
func (m *Manager) retryDelay(n int) time.Duration {
	d := 100 * time.Millisecond
	for i := 1; i < n && d < 5*time.Second; i++ {
		d *= 2
	}
	return max(min(d, m.cfg.Interval/2, 5*time.Second), time.Millisecond)
}

// decide records the first decision about l and queues its call.
func (m *Manager) decide(l *Lease, d decision, delay time.Duration) {
	m.mu.Lock()
	if m.stopped || l.done || l.decided != holding {
		m.mu.Unlock()
		return
	}
	l.decided, l.delay = d, delay
	if l.index >= 0 {
		heap.Remove(&m.leases, l.index)
	}
	// A lease with an extension on the wire is settled when that call
	// returns: its answer says whether the lease held.
	poke := !l.busy && m.settle(l, time.Now())
	poke = poke || len(m.pending.lost) > 0
	m.mu.Unlock()
	if poke {
		m.poke()
	}
}

// settle queues l's decided call, or ends l when nothing is left to send;
// a lease whose deadline has passed is lost first. It reports whether the
// loop must be woken. Called with m.mu held, l in neither the heap nor a
// call.
func (m *Manager) settle(l *Lease, now time.Time) bool {
	if l.decided == released {
		m.finish(l) // settled by someone else (Release)
		return false
	}
	if l.lost == nil && !now.Before(l.deadline) {
		m.markLost(l, l.endReason())
	}
	switch {
	case l.decided == acking && l.lost != nil:
		if l.late {
			m.finish(l) // the one late attempt was made
			return false
		}
		l.late = true
		return m.enqueue(&m.acks, &m.acksAt, l, now)
	case l.decided == acking:
		return m.enqueue(&m.acks, &m.acksAt, l, now)
	case l.lost != nil:
		m.finish(l) // nothing to give back: visible, or delivered again, already
		return false
	case l.decided == givenUp:
		// A give-back does not wait for its window: the message is wanted
		// elsewhere now (the drain, or a group that must keep its order).
		m.enqueue(&m.nacks, &m.nacksAt, l, now)
		m.nacksAt = now.Add(-ackWindow)
		return true
	}
	return m.enqueue(&m.nacks, &m.nacksAt, l, now)
}

// enqueue appends l to a batch queue and reports whether the loop must be
// woken: the queue was empty (its window starts) or is full.
func (m *Manager) enqueue(q *[]*Lease, since *time.Time, l *Lease, now time.Time) bool {
	if len(*q) == 0 {
		*since = now
	}
	*q = append(*q, l)
	return len(*q) == 1 || len(*q) == sqsloop.MaxBatchSize
}

// finish ends l: the Manager no longer tracks it. Called with m.mu held.
func (m *Manager) finish(l *Lease) {
	if !l.done {
		l.done = true
		m.st.held.Add(-1)
	}
}

// GiveBackAll gives back every lease still holding (no decision yet) when
// it is called: at once, or, for a lease with an extension on the wire,
// when that call comes back. It is the end of a drain, when the handlers
// that held them are abandoned. Leases held later are not affected. Safe
// for concurrent use.
func (m *Manager) GiveBackAll() {
	m.mu.Lock()
	m.giveBack = m.holds
	now := time.Now()
	var held []*Lease
	for _, l := range m.leases {
		if l.decided == holding {
			held = append(held, l)
		}
	}
	for _, l := range held {
		heap.Remove(&m.leases, l.index)
		l.decided = givenUp
		m.settle(l, now)
	}
	m.mu.Unlock()
	m.poke()
}
