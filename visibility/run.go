package visibility

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
)

// maxCalls bounds the batch calls a Manager has on the wire at once: the
// sender goroutines Run starts, and waits for before it returns.
const maxCalls = 32

// maxCallTimeout bounds one batch call. Every call is also bounded by
// Interval/2: a lease is in one call at a time, so a hung call, extension
// or delete, must return in time for the next look at its leases (and for
// an extension sent then to land). A call that times out is a transient
// failure.
const maxCallTimeout = 10 * time.Second

// flushTimeout bounds how long Run, once its context is done, keeps
// sending the acks, nacks and give-backs already decided (and retrying
// those that fail) before it returns: 1 s. What is still unsent then is
// abandoned: those messages become visible when their leases end.
const flushTimeout = time.Second

// Run is the Manager's one loop: it extends alive leases as they come
// due and sends the decided acks, nacks and give-backs, until ctx is done.
// Then it stops extending, sends what was decided for at most 1 s
// (flushing; the calls still on the wire then are cancelled), waits for
// every call it started and its 32 sender goroutines, and returns nil.
// Leases still holding then are no longer extended; decisions made after
// Run returns are ignored. Run may be called once: every later call
// returns an error wrapping sqsloop.ErrAlreadyRunning.
func (m *Manager) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return fmt.Errorf("visibility: Manager.Run called twice: %w", sqsloop.ErrAlreadyRunning)
	}
	callCtx, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	s := startSenders(m, callCtx)

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	done := ctx.Done()
	var flushBy time.Time
	if ctx.Err() != nil { // done already: flush only, extend nothing
		done, flushBy = nil, m.startFlush()
	}
	for {
		now := time.Now()
		m.mu.Lock()
		flushing := m.flushing
		out := m.plan(now)
		next := m.nextWake()
		left := flushing && m.settling() // a scan of every lease: only while flushing
		r := m.takeReports()
		m.mu.Unlock()
		m.report(r)
		s.queue(out)
		if flushing && ((!left && s.idle()) || !now.Before(flushBy)) {
			break
		}
		if flushing && (next.IsZero() || flushBy.Before(next)) {
			next = flushBy
		}
		var fire <-chan time.Time
		if !next.IsZero() {
			timer.Reset(time.Until(next)) // not next.Sub(now): report and queue took time
			fire = timer.C
		}
		select {
		case <-done:
			done, flushBy = nil, m.startFlush()
		case <-m.wake:
		case <-fire:
		case c := <-s.results:
			s.returned(c)
		}
	}
	cancelCalls()
	s.stop()
	m.abandon()
	// Leases found lost, and calls failed, by the answers that came in
	// after the loop, or by decisions made meanwhile, are reported too.
	m.mu.Lock()
	r := m.takeReports()
	m.mu.Unlock()
	m.report(r)
	return nil
}

// startFlush records that Run stopped extending and returns when the flush
// must end.
func (m *Manager) startFlush() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.flushing = true
	return time.Now().Add(flushTimeout)
}

// abandon ends the Manager's work once Run's loop and calls are done:
// decided calls never sent count as failed; leases still holding are no
// longer extended, and lapse at their deadlines (their Err says so then);
// decisions from now on are ignored, so nothing is held any more.
func (m *Manager) abandon() {
	m.mu.Lock()
	m.stopped = true
	abandoned, unsent := 0, 0
	count := func(l *Lease) {
		switch l.decided {
		case holding:
			abandoned++ // not done: its Err still tells when it lapses
			return
		case acking:
			m.st.ackFailed.Add(1)
		case nacking, givenUp:
			m.st.nackFailed.Add(1)
		}
		unsent++
		m.finish(l)
	}
	m.takeAll(count)
	// Lost leases whose holders have not decided yet are in none of the
	// above; they are no longer held either.
	m.st.held.Store(0)
	m.mu.Unlock()
	if abandoned > 0 || unsent > 0 {
		m.log.Warn("visibility: leases still held when the manager stopped; their messages become visible when their leases end",
			slog.Int("leases", abandoned), slog.Int("unsent_decisions", unsent))
	}
}
