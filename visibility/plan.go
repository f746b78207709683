package visibility

import (
	"container/heap"
	"time"

	"github.com/sqsloop/sqsloop"
)

// callKind is what a batch call does.
type callKind uint8

const (
	extendCall callKind = iota // ChangeMessageVisibilityBatch to keep messages hidden
	deleteCall                 // DeleteMessageBatch: acks
	changeCall                 // ChangeMessageVisibilityBatch: nacks and give-backs
)

// call is one batch call of at most MaxBatchSize entries: the leases it is
// about and, for visibility changes, the timeout each asks for.
type call struct {
	kind     callKind
	leases   []*Lease
	timeouts []time.Duration
	sentAt   time.Time
	errs     []error // one per entry, filled by send
}

// plan takes what is due at now out of the heap and the queues and
// returns the calls to make. Flushing (Run's context is done) sends every
// decided call at once and extends nothing. Called with m.mu held.
func (m *Manager) plan(now time.Time, flushing bool) []*call {
	var out []*call
	if flushing {
		m.dueDecisions(now)
	} else {
		out = m.extensions(now)
	}
	window := ackWindow
	if n := len(m.acks); n > 0 && (flushing || n >= sqsloop.MaxBatchSize || !now.Before(m.acksAt.Add(window))) {
		out = append(out, m.batches(deleteCall, &m.acks, &m.acksAt, now, flushing)...)
	}
	if n := len(m.nacks); n > 0 && (flushing || n >= sqsloop.MaxBatchSize || !now.Before(m.nacksAt.Add(window))) {
		out = append(out, m.batches(changeCall, &m.nacks, &m.nacksAt, now, flushing)...)
	}
	return out
}

// batches cuts a queue into calls: every full batch, and the rest too when
// its window is over or when flushing; a rest that waits starts a new
// window.
func (m *Manager) batches(kind callKind, q *[]*Lease, since *time.Time, now time.Time, all bool) []*call {
	all = all || !now.Before(since.Add(ackWindow))
	var out []*call
	rest := *q
	for len(rest) >= sqsloop.MaxBatchSize || (all && len(rest) > 0) {
		n := min(len(rest), sqsloop.MaxBatchSize)
		c := &call{kind: kind, leases: make([]*Lease, n), sentAt: now}
		copy(c.leases, rest[:n])
		if kind == changeCall {
			c.timeouts = make([]time.Duration, n)
		}
		for i, l := range c.leases {
			l.queued, l.busy = false, true
			if kind == changeCall && l.decided == nacking {
				c.timeouts[i] = l.delay
			}
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

// extensions takes the leases due at now: it extends the alive ones (and
// fills the last batch with alive leases that would come due within the
// next Interval, since that call goes out anyway), marks lapsed ones lost,
// retries decided acks and nacks whose back-off ended, and schedules the
// rest. Called with m.mu held.
func (m *Manager) extensions(now time.Time) []*call {
	var ext []*Lease
	var vts []time.Duration
	var later []*Lease
	for len(m.leases) > 0 && !m.leases[0].due.After(now) {
		l := heap.Pop(&m.leases).(*Lease)
		switch {
		case l.decided != holding:
			if m.retryOrExtend(l, now) {
				if vt, ok := m.request(l, now); ok {
					ext, vts = append(ext, l), append(vts, vt)
					continue
				}
				m.settle(l, now)
			}
		case !now.Before(l.deadline):
			m.markLost(l, l.endReason()) // waits for its holder's decision
		case m.alive(l):
			if vt, ok := m.request(l, now); ok {
				ext, vts = append(ext, l), append(vts, vt)
				continue
			}
			l.due = l.deadline
			later = append(later, l)
		default:
			// No proof of work since the last extension: no extension.
			l.due = m.nextLook(l, now)
			later = append(later, l)
		}
	}
	if r := len(ext) % sqsloop.MaxBatchSize; r != 0 {
		horizon := now.Add(m.cfg.Interval)
		for need := sqsloop.MaxBatchSize - r; need > 0 && len(m.leases) > 0 && !m.leases[0].due.After(horizon); {
			l := heap.Pop(&m.leases).(*Lease)
			if l.decided == holding && m.alive(l) {
				if vt, ok := m.request(l, now); ok {
					ext, vts = append(ext, l), append(vts, vt)
					need--
					continue
				}
			}
			later = append(later, l)
		}
	}
	for _, l := range later {
		heap.Push(&m.leases, l)
	}
	var out []*call
	for start := 0; start < len(ext); start += sqsloop.MaxBatchSize {
		end := min(start+sqsloop.MaxBatchSize, len(ext))
		for _, l := range ext[start:end] {
			l.busy = true
		}
		out = append(out, &call{kind: extendCall, leases: ext[start:end:end], timeouts: vts[start:end:end], sentAt: now})
	}
	return out
}

// retryOrExtend handles a decided lease whose retry is due. It reports
// whether the lease must be extended first (an ack still failing while
// its deadline nears); otherwise it has queued the retry, or ended the
// lease. Called with m.mu held.
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
	if l.decided == acking && l.lost == nil && !m.cfg.Disabled && l.deadline.Sub(now) <= m.cfg.Interval && !l.capped {
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
		if !now.Before(l.deadline) && l.decided != acking {
			m.st.nackFailed.Add(1)
			m.finish(l)
			continue
		}
		m.settle(l, now)
	}
}

// nextWake is when the loop must look again: the next lease due, or the
// end of a batch window; zero when nothing waits. Called with m.mu held.
func (m *Manager) nextWake(flushing bool) time.Time {
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

// nextLook is when to look again at l, not alive at now: an Interval
// later, and once more Interval/2 before its deadline (an extension sent
// then still lands), and at the deadline, when it has lapsed.
func (m *Manager) nextLook(l *Lease, now time.Time) time.Time {
	last := l.deadline.Add(-m.cfg.Interval / 2)
	next := now.Add(m.cfg.Interval)
	switch {
	case next.Before(last):
		return next
	case now.Before(last):
		return last
	}
	return l.deadline
}

// alive reports whether l has earned an extension. Called with m.mu held.
func (m *Manager) alive(l *Lease) bool {
	switch {
	case m.cfg.Disabled || l.capped:
		return false
	case m.cfg.Policy == FixedInterval:
		return true
	}
	return l.hb != nil && l.hb.LastBeat().After(l.lastExt)
}

// request is the visibility timeout l's extension at now asks for,
// clamped to the ceiling. ok is false when the ceiling leaves less than a
// second to ask for: l can no longer be extended.
func (m *Manager) request(l *Lease, now time.Time) (vt time.Duration, ok bool) {
	vt = sqsloop.WholeSeconds(m.cfg.Extension) // as SQS will count it
	if now.Add(vt).After(l.ceiling) {
		vt = l.ceiling.Sub(now).Truncate(time.Second)
		if vt < time.Second {
			l.capped = true
			return 0, false
		}
	}
	return vt, true
}
