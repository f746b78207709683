package leases

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
// abandoned: those messages become visible when their leases end. Stop
// sets another bound.
const flushTimeout = time.Second

// Run is the Manager's one loop: it extends alive leases as they come
// due and sends the decided acks, nacks and give-backs, until ctx is done
// or Stop is called. Then it stops extending, sends what was decided for
// at most 1 s, or until Stop's context is done (flushing; the calls still
// on the wire then are cancelled), waits for every call it started and its
// 32 sender goroutines, and returns nil. Leases still holding then are no
// longer extended; decisions made after Run returns are ignored. Run may
// be called once: every later call returns an error wrapping
// sqsloop.ErrAlreadyRunning.
func (m *Manager) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return fmt.Errorf("visibility: Manager.Run called twice: %w", sqsloop.ErrAlreadyRunning)
	}
	defer close(m.ran)
	callCtx, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	s := startSenders(m, callCtx)

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	done, stop := ctx.Done(), m.stop
	var flushEnd <-chan struct{} // once flushing: closed when the flush must end
	flush := func(by context.Context) {
		done, stop, flushEnd = nil, nil, by.Done()
		m.mu.Lock()
		m.flushing = true
		m.mu.Unlock()
	}
	cancelFlush := context.CancelFunc(func() {})
	defer func() { cancelFlush() }()
	flushOneSecond := func() {
		var by context.Context
		by, cancelFlush = context.WithTimeout(context.Background(), flushTimeout)
		flush(by)
	}
	select { // done or stopped already: flush only, extend nothing
	case <-done:
		flushOneSecond()
	case <-stop:
		flush(m.stopBy)
	default:
	}
loop:
	for {
		m.mu.Lock()
		flushing := m.flushing
		out := m.plan(time.Now())
		next := m.nextWake()
		left := flushing && m.settling() // a scan of every lease: only while flushing
		r := m.takeReports()
		m.mu.Unlock()
		m.report(r)
		s.queue(out)
		if flushing && !left && s.idle() {
			break
		}
		select {
		case <-flushEnd: // nil until flushing
			break loop
		default:
		}
		var fire <-chan time.Time
		if !next.IsZero() {
			timer.Reset(time.Until(next)) // report and queue took time
			fire = timer.C
		}
		select {
		case <-done:
			flushOneSecond()
		case <-stop:
			flush(m.stopBy)
		case <-flushEnd:
			break loop
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

// Stop ends Run as the end of its context does, but with the flush
// bounded by ctx instead of 1 s, in the manner of net/http's
// Server.Shutdown: Run stops extending and sends the acks, nacks and
// give-backs already decided until they are sent or ctx is done, then
// cancels the calls still on the wire and returns. Each call is still
// bounded by Config.Interval/2 (at most 10 s); one that fails or times
// out transiently is tried again, with back-off, while ctx lasts. A
// holder with a budget passes what is left of it: a consumer's drain
// (what its handlers left of the drain budget, so that a mailbox slow at
// that moment does not cost acks), sqslambda's invocation (its
// deadline). Stop returns when Run has returned (at once if Run has not
// started: when it does, it only flushes), with ctx.Err() if ctx ended
// first (what was unsent then is abandoned, as after Run's 1 s: logged,
// counted failed, and acks also counted in Stats.AckUnsent), nil
// otherwise. Only the first call's ctx counts. Safe for concurrent use.
func (m *Manager) Stop(ctx context.Context) error {
	m.stopOnce.Do(func() {
		m.stopBy = ctx
		close(m.stop)
	})
	if !m.running.Load() {
		return nil
	}
	<-m.ran
	return ctx.Err()
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
			if l.lost == nil { // a lost one is watched (see watch): visible already
				abandoned++ // not done: its Err still tells when it lapses
			}
			return
		case acking:
			m.st.ackFailed.Add(1)
			m.st.ackUnsent.Add(1)
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
