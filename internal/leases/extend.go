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

// extensions takes the leases due at now: it extends the alive ones (and
// fills the last batch with alive leases that would come due within the
// next Interval, since that call goes out anyway) unless their handler is
// expected to return well before their deadline (canWait), marks lapsed
// ones lost (and watches those whose handler runs on), retries decided
// acks and nacks whose back-off ended, and schedules the rest. Called with
// m.mu held.
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
				if vt, ok := m.request(l, now); ok {
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
		case m.alive(l, now):
			if m.canWait(l, now) {
				l.waited = true
				l.due = now.Add(m.cfg.Interval)
				later = append(later, l)
				continue
			}
			vt, ok := m.request(l, now)
			if !ok {
				l.due = l.deadline
				later = append(later, l)
				continue
			}
			if vt, ok = m.afterWait(l, vt, now); ok {
				extend(l, vt)
				continue
			}
			l.due = m.nextLook(l, now)
			later = append(later, l)
		default:
			// No proof of work since the last extension: no extension.
			l.due = m.nextLook(l, now)
			later = append(later, l)
		}
	}
	if c != nil && len(c.leases) < sqsloop.MaxBatchSize {
		horizon := now.Add(m.cfg.Interval)
		for len(c.leases) < sqsloop.MaxBatchSize && len(m.leases) > 0 && !m.leases[0].due.After(horizon) {
			l := heap.Pop(&m.leases).(*Lease)
			if l.decided == holding && l.lost == nil && m.alive(l, now) && !m.canWait(l, now) {
				if vt, ok := m.request(l, now); ok {
					if vt, ok = m.afterWait(l, vt, now); ok {
						m.add(c, l, vt)
						continue
					}
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

// alive reports whether l has earned an extension: its heartbeat beat
// since the beat the last extension was earned by. (Not since that
// extension's time: a beat is stamped when first observed, here, a moment
// after now on the real clock, and would count again at the next look.)
// Called with m.mu held.
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
		m.ls.gap(l.beatNow.Sub(l.seen))
		l.seen = l.beatNow
	}
	return l.beatNow.After(l.beatSeen) || l.startUnearned()
}

// startUnearned reports whether l's handler started since its last
// extension, which counts as a beat when the lease owner chooses an
// extension longer than the visibility timeout (or the handler set one):
// the first gap, from the start to the first beat, is a gap like the
// others, and the lease of a handler that beats every few minutes must
// not lapse at the end of the receive's visibility timeout. (With a
// shorter extension the receive's covers the first gap, and a handler
// that never beats loses its lease then, as with a fixed one.) Called
// with m.mu held.
func (l *Lease) startUnearned() bool {
	return l.begun && !l.startEarned && (l.own > 0 || l.m.ls.adaptive()) && l.m.extension(l) > l.msg.VisibilityTimeout
}

// extension is what an extension of l asks for: what its handler asked
// for (SetExtension), else the Manager's choice (Lengths). Called with m.mu
// held.
func (m *Manager) extension(l *Lease) time.Duration {
	if l.own > 0 {
		return l.own
	}
	return m.ls.extension(l.msg.VisibilityTimeout)
}

// canWait reports whether l, alive at now, can do without an extension
// until the next look (adaptive only): its handler is expected to return
// (the 99th percentile of run times) before then, with the deadline still
// 2.5 Intervals further, so that a handler that runs longer than expected
// is extended at one of the two looks left before the last.
func (m *Manager) canWait(l *Lease, now time.Time) bool {
	if l.own > 0 || !l.begun || l.returned || !m.ls.adaptive() {
		return false
	}
	run, ok := m.ls.expectedRun()
	end := l.begin.Add(run)
	return ok && now.Before(end) && !end.Add(m.cfg.Interval*5/2).After(l.deadline)
}

// afterWait is what an extension of l to vt at now asks for once canWait
// has let l wait: no more than an extension at the look that saw its
// handler's latest beat (or its start) would have given, so that waiting
// for a handler expected to return never lets a stuck one keep its
// message longer than a lease extended at every look (E after that look).
// ok is false when l's deadline is that far already: no extension is
// needed, and without a new beat l lapses at its deadline. Called with
// m.mu held.
func (m *Manager) afterWait(l *Lease, vt time.Duration, now time.Time) (time.Duration, bool) {
	if !l.waited {
		return vt, true
	}
	beat := l.beatNow
	if l.begin.After(beat) {
		beat = l.begin
	}
	d := beat.Add(vt).Sub(now).Truncate(time.Second) // whole seconds, as SQS counts
	switch {
	case d >= vt:
		return vt, true
	case !now.Add(d).After(l.deadline):
		return 0, false
	}
	return d, true
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

// request is the visibility timeout l's extension at now asks for,
// clamped to the ceiling. ok is false when the ceiling leaves less than a
// second to ask for: l can no longer be extended.
func (m *Manager) request(l *Lease, now time.Time) (vt time.Duration, ok bool) {
	vt = sqsloop.WholeSeconds(m.extension(l)) // as SQS will count it
	if now.Add(vt).After(l.ceiling) {
		vt = l.ceiling.Sub(now).Truncate(time.Second)
		if vt < time.Second {
			l.capped = true
			return 0, false
		}
	}
	return vt, true
}

// applyExtension records the outcome of l's extension to vt sent at
// sentAt. Called with m.mu held.
func (m *Manager) applyExtension(l *Lease, vt time.Duration, err error, sentAt, now time.Time) {
	switch {
	case err == nil:
		m.st.extended.Add(1)
		l.lastExt = sentAt
		l.startEarned = l.begun
		l.waited = false
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
