package leases

import (
	"container/heap"
	"errors"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
	"github.com/sqsloop/sqsloop/visibility"
)

// extensions takes the leases due at now: it extends the alive ones whose
// deadline nears (due: within 2.5 Intervals; and fills the last batch with
// alive leases that will be due within the next Interval, since that call
// goes out anyway), marks lapsed ones lost (and watches those whose
// handler runs on), retries decided acks and nacks whose back-off ended,
// and schedules the rest. Called with m.mu held.
func (m *Manager) extensions(now time.Time) []*call {
	var out []*call
	var c *call
	extend := func(l *Lease, vt time.Duration) {
		if c == nil || len(c.leases) == sqsloop.MaxBatchSize {
			c = m.newCall(extendCall, now)
			out = append(out, c)
		}
		m.add(c, l, vt)
	}
	var later []*Lease
	for len(m.leases) > 0 && !m.leases[0].due.After(now) {
		l := heap.Pop(&m.leases).(*Lease)
		switch {
		case l.decided != holding:
			if m.retryOrExtend(l, now) {
				if vt, ok := m.request(l, now, now); ok {
					extend(l, vt)
					continue
				}
				m.settle(l, now)
			}
		case l.lost != nil || !now.Before(l.deadline): // lost already: watched
			m.markLost(l, l.endReason()) // it waits for its holder's decision
			if m.watch(l, now) {
				l.due = now.Add(m.cfg.Interval)
				later = append(later, l)
			}
		case m.alive(l, now) && m.nears(l, now, 0):
			if vt, ok := m.request(l, m.earnedAt(l, now), now); ok {
				extend(l, vt)
				continue
			}
			fallthrough
		default:
			// No proof of work since the last extension, or its deadline
			// is far yet: no extension now.
			l.due = m.nextLook(l, now)
			later = append(later, l)
		}
	}
	if c != nil && len(c.leases) < sqsloop.MaxBatchSize {
		horizon := now.Add(m.cfg.Interval)
		for len(c.leases) < sqsloop.MaxBatchSize && len(m.leases) > 0 && !m.leases[0].due.After(horizon) {
			l := heap.Pop(&m.leases).(*Lease)
			if l.decided == holding && l.lost == nil && m.alive(l, now) && m.nears(l, now, m.cfg.Interval) {
				if vt, ok := m.request(l, m.earnedAt(l, now), now); ok {
					m.add(c, l, vt)
					continue
				}
			}
			later = append(later, l)
		}
	}
	for _, l := range later {
		heap.Push(&m.leases, l)
	}
	return out
}

// nearing is how close to its deadline an alive lease is extended: 2.5
// Intervals, so that the look that finds it so and the next are both
// before the last (Interval/2 before the deadline), and a failed
// extension is tried again twice.
func (m *Manager) nearing() time.Duration { return m.cfg.Interval * 5 / 2 }

// nears reports whether l's deadline is within nearing of now+ahead: an
// extension of it is due by then. Called with m.mu held.
func (m *Manager) nears(l *Lease, now time.Time, ahead time.Duration) bool {
	return l.deadline.Sub(now) <= m.nearing()+ahead
}

// nextLook is when to look again at l, not extended at now: an Interval
// later, but never past the look where its deadline nears (nearing before
// it), nor past the last one, Interval/2 before its deadline (an
// extension sent then still lands), and at the deadline, when it has
// lapsed.
func (m *Manager) nextLook(l *Lease, now time.Time) time.Time {
	next := now.Add(m.cfg.Interval)
	for _, at := range []time.Time{l.deadline.Add(-m.nearing()), l.deadline.Add(-m.cfg.Interval / 2), l.deadline} {
		if now.Before(at) {
			return earliest(next, at)
		}
	}
	return l.deadline
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// alive reports whether l has earned an extension: its heartbeat beat
// since the beat the last extension was earned by. (Not since that
// extension's time: a beat is stamped when first observed, here, a moment
// after now on the real clock, and would count again at the next look.)
// It records the gap that ends at a beat it sees first, for the lease and
// for the queue. Called with m.mu held.
func (m *Manager) alive(l *Lease, now time.Time) bool {
	switch {
	case m.cfg.Disabled || l.capped:
		return false
	case m.cfg.FixedInterval:
		return true
	case l.hb == nil: // waiting for its handler: kept alive for a while
		return now.Sub(l.msg.ReceivedAt) < m.extension(l)
	}
	l.beatNow = l.hb.LastBeat()
	if l.begun && !l.returned && l.beatNow.After(l.seen) {
		m.observed(l, l.beatNow.Sub(l.seen))
		l.seen = l.beatNow
	}
	return l.beatNow.After(l.beatSeen) || l.startUnearned()
}

// observed records a gap of d between two beats of l's running handler,
// for the lease's own extension and the queue's. Called with m.mu held.
func (m *Manager) observed(l *Lease, d time.Duration) {
	l.maxGap = max(l.maxGap, d)
	m.ls.gap(d)
}

// startUnearned reports whether l's handler started since its last
// extension, which counts as a beat when the extension is longer than the
// visibility timeout (always with the lease owner's choice, which is at
// least VT + Interval/2; with Extension or SetExtension when it is): the
// first gap, from the start to the first beat, is a gap like the others,
// and the lease of a handler that beats every few minutes must not lapse
// at the end of the receive's visibility timeout. (With a shorter fixed
// extension the receive's covers the first gap, and a handler that never
// beats loses its lease then.) Called with m.mu held.
func (l *Lease) startUnearned() bool {
	return l.begun && !l.startEarned && l.m.extension(l) > l.msg.VisibilityTimeout
}

// earnedAt is when the extension of l, alive at now, counts from: the
// stamp of the beat that earns it (or its handler's start, when that
// earns it: startUnearned), so that a stuck handler keeps its message no
// longer than E after the look that saw its last beat however long the
// extension was deferred; now for a lease extended without beats (waiting
// for its handler, FixedInterval). Called with m.mu held.
func (m *Manager) earnedAt(l *Lease, now time.Time) time.Time {
	if l.hb == nil || m.cfg.FixedInterval {
		return now
	}
	at := l.beatNow
	if l.startUnearned() && l.begin.After(at) {
		at = l.begin
	}
	return at
}

// extension is what an extension of l asks for: what its handler asked
// for (SetExtension), else the Manager's choice (Lengths). Called with m.mu
// held.
func (m *Manager) extension(l *Lease) time.Duration {
	if l.own > 0 {
		return l.own
	}
	return m.ls.extension(l.msg.VisibilityTimeout, l.maxGap)
}

// watch reports whether to look again, an Interval later, at l, lost at
// now: a lease that lapsed for want of beats while its handler runs
// (adaptive only). The handler's next beat ends the gap that was too long
// for the extension; observed, it makes the next extensions long enough.
// The watch ends at that beat, when the handler returns, or
// MaxExtensionPeriod after the gap began. Called with m.mu held.
func (m *Manager) watch(l *Lease, now time.Time) bool {
	if !m.ls.adaptive() || !l.begun || l.returned || l.own > 0 || !errors.Is(l.lost, visibility.ErrLeaseLapsed) {
		return false
	}
	if b := l.hb.LastBeat(); b.After(l.seen) {
		m.ls.gap(b.Sub(l.seen))
		return false
	}
	_, hi := m.ls.Bounds(l.msg.VisibilityTimeout)
	return now.Sub(l.seen) <= hi
}

// request is the visibility timeout an extension of l sent at now asks
// for: until l's extension after from (earnedAt), in whole seconds rounded
// up (SQS's unit; never short of what the beat earned), clamped to the
// ceiling. ok is false when that is no later than l's deadline already
// (nothing to gain), or when the ceiling leaves less than a second to ask
// for: l can no longer be extended (capped). Called with m.mu held.
func (m *Manager) request(l *Lease, from, now time.Time) (vt time.Duration, ok bool) {
	if from.After(now) { // a beat stamped by this look, a moment after its now on the real clock
		from = now
	}
	vt = sqsloop.WholeSeconds(from.Add(m.extension(l)).Sub(now))
	if now.Add(vt).After(l.ceiling) {
		vt = l.ceiling.Sub(now).Truncate(time.Second)
		if vt < time.Second {
			l.capped = true
			return 0, false
		}
	}
	return vt, now.Add(vt).After(l.deadline)
}

// applyExtension records the outcome of l's extension to vt sent at
// sentAt. Called with m.mu held.
func (m *Manager) applyExtension(l *Lease, vt time.Duration, err error, sentAt, now time.Time) {
	switch {
	case err == nil:
		m.st.extended.Add(1)
		l.lastExt = sentAt
		l.startEarned = l.begun
		if l.beatNow.After(l.beatSeen) { // not for an extension without a beat (no heartbeat yet, FixedInterval)
			l.beatSeen = l.beatNow
		}
		l.deadline = sentAt.Add(vt)
		l.capped = l.ceiling.Sub(l.deadline) < time.Second
		l.lastErr = nil
		l.due = m.firstLook(l)
	case rules.Permanent(err) && rules.FaultOf(err) != rules.Denied:
		m.markLost(l, err)
	default: // transient, or access denied, which may still be propagating
		m.st.failures.Add(1)
		l.lastErr = err
		l.due = m.nextLook(l, now)
		m.noteFailure(slog.LevelWarn, "visibility: extension failed; will try again at the next look", l, err)
	}
	if l.decided == holding && l.seq <= m.giveBack {
		l.decided = givenUp
	}
	switch {
	case l.decided != holding:
		m.settle(l, now)
	case l.lost == nil:
		heap.Push(&m.leases, l)
	}
	// A lost lease still holding waits for its holder's decision.
}

// firstLook is when a new lease is looked at first: Interval after its
// receive, never after its deadline.
func (m *Manager) firstLook(l *Lease) time.Time {
	due := l.lastExt.Add(m.cfg.Interval)
	if due.After(l.deadline) {
		due = l.deadline
	}
	return due
}
