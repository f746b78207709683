package leases

import (
	"context"
	"slices"
	"time"
)

// Interrupted is what Interrupt did.
type Interrupted struct {
	// Leases is how many leases were held, Interrupt's to settle: all but
	// those already lost (their message is visible, or delivered again),
	// with those in a call on the wire at that moment (settled as that
	// call comes back).
	Leases int
	// Acked counts decided acks deleted; GivenBack leases made visible
	// (after their back-off for decided nacks, at once for the rest).
	Acked, GivenBack int
	// Failed counts leases not settled when Interrupt returned: their call
	// failed, or had not come back. Their messages become visible at their
	// lease deadlines, by VisibleBy at the latest (the latest deadline of
	// those leases; zero when none failed). A lease whose extension was
	// still on the wire then may stay hidden up to Config.Extension after
	// that call lands.
	Failed    int
	VisibleBy time.Time
}

// takeAll empties the heap and the batch queues, calling f for each lease
// they held (not those in a call on the wire). Called with m.mu held.
func (m *Manager) takeAll(f func(*Lease)) {
	for _, q := range [][]*Lease{m.leases, m.acks, m.nacks} {
		for _, l := range q {
			f(l)
		}
	}
	m.leases, m.acks, m.nacks = nil, nil, nil
	m.checkIdle()
}

// checkIdle closes m.idle, which an Interrupt waits on, once no lease is
// in a call, queued, or waiting in the heap for a retry. Called with m.mu
// held.
func (m *Manager) checkIdle() {
	if m.idle != nil && m.wire == 0 && len(m.leases) == 0 && len(m.acks) == 0 && len(m.nacks) == 0 {
		close(m.idle)
		m.idle = nil
	}
}

// Interrupt ends the Manager's work at once, for a process about to exit (a
// second Ctrl+C): it stops serving (later holds and decisions are ignored,
// nothing is extended any more) and settles every lease it holds in one
// round of batch calls made at once, with ctx: decided acks are deleted,
// decided nacks made visible after their back-off, and every other lease
// (handlers still running, messages waiting for one, give-backs) made
// visible at once. A lease in a call on the wire is settled when that call
// comes back (an extended one is given back then), and a call that fails
// transiently is tried again, both by Run while it runs. Interrupt returns
// when nothing is left to send or ctx is done, whichever is first; a call
// still on the wire then is left to the process's exit. Keep ctx short: a
// process that exits does not wait. Safe for concurrent use, also while
// Run runs; a second call settles nothing.
func (m *Manager) Interrupt(ctx context.Context) Interrupted {
	m.mu.Lock()
	m.stopped = true
	m.giveBack = m.holds // an extension on the wire ends in a give-back (applyExtension)
	acked, givenBack := m.settled()
	var acks, changes []*Lease
	m.takeAll(func(l *Lease) {
		if l.lost != nil {
			m.finish(l) // nothing to give back; a late ack is not worth the wait
			return
		}
		switch l.decided {
		case acking:
			acks = append(acks, l)
			return
		case holding:
			l.decided, l.delay = givenUp, 0
		}
		changes = append(changes, l)
	})
	round := slices.Concat(acks, changes) // batches clears acks and changes
	r := Interrupted{Leases: len(round) + m.wire}
	now := time.Now()
	var since time.Time
	calls := m.batches(nil, deleteCall, &acks, &since, now, true)
	calls = m.batches(calls, changeCall, &changes, &since, now, true)
	if m.idle == nil {
		m.idle = make(chan struct{})
	}
	idle := m.idle
	m.checkIdle()
	m.mu.Unlock()

	work := make(chan *call, len(calls))
	for _, c := range calls {
		work <- c
	}
	close(work)
	for range min(len(calls), maxCalls) {
		// Not waited for: a call outlasting ctx is left to the process's exit.
		go func() {
			for c := range work {
				m.send(ctx, c)
				m.mu.Lock()
				m.apply(c, time.Now())
				m.recycle(c)
				m.mu.Unlock()
				m.poke() // Run reports failed calls, and retries them
			}
		}()
	}
	select {
	case <-idle:
	case <-ctx.Done():
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	a, g := m.settled()
	r.Acked, r.GivenBack = int(a-acked), int(g-givenBack)
	r.Failed = max(r.Leases-r.Acked-r.GivenBack, 0)
	if r.Failed > 0 {
		for _, q := range [][]*Lease{round, m.leases, m.acks, m.nacks} {
			for _, l := range q {
				if !l.done && l.deadline.After(r.VisibleBy) {
					r.VisibleBy = l.deadline
				}
			}
		}
	}
	return r
}

// settled returns the counts of leases acked and given back (or nacked)
// so far. Called with m.mu held.
func (m *Manager) settled() (acked, givenBack int64) {
	return m.st.acked.Load() + m.st.lateAcked.Load(), m.st.givenBack.Load() + m.st.nacked.Load()
}
