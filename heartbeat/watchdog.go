package heartbeat

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// StuckHandler describes a watched handler that went at least
// [WatchdogConfig.Threshold] without an observed beat.
type StuckHandler struct {
	// Name is the name given to [Watchdog.Watch] (for example a message ID).
	Name string
	// Since is the handler's latest observed beat, or the Heartbeat's start
	// time if it never beat.
	Since time.Time
	// Elapsed is how long the handler had gone without an observed beat
	// when the Watchdog last looked (for OnRecovered: the whole gap).
	Elapsed time.Duration
}

// Watchdog spots stuck handlers: handlers whose [Heartbeat] has not beaten
// for [WatchdogConfig.Threshold]. It checks every watched Heartbeat from one
// goroutine, the one that calls [Watchdog.Run], and reports each stuck
// episode once (OnStuck) and its end (OnRecovered).
//
// Checking a Heartbeat observes it (see [Heartbeat.LastBeat]), which is
// harmless to other observers. Watch, the functions it returns, and Stuck
// are safe for concurrent use, also while Run is running.
type Watchdog struct {
	cfg     WatchdogConfig
	running atomic.Bool

	mu      sync.Mutex
	watched []*watched // in Watch order
}

type watched struct {
	name    string
	h       *Heartbeat
	stuck   bool
	report  StuckHandler // valid while stuck
	removed bool
}

// NewWatchdog validates cfg (see [WatchdogConfig.Validate]), applies its
// defaults and returns a Watchdog that watches nothing yet and does not run
// until [Watchdog.Run] is called. On bad config it returns a nil Watchdog
// and an error wrapping [ErrInvalidArgument] that names every bad field.
func NewWatchdog(cfg WatchdogConfig) (*Watchdog, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Watchdog{cfg: cfg.withDefaults()}, nil
}

// Watch starts watching h under name and returns a function that stops
// watching it. The returned function is idempotent and safe to call from
// any goroutine, including from OnStuck and OnRecovered; a check already in
// progress may still report h once. A nil h is not watched (the returned
// function does nothing). The same Heartbeat may be watched under several
// names; each is reported on its own. Safe for concurrent use.
func (w *Watchdog) Watch(name string, h *Heartbeat) (unwatch func()) {
	if w == nil || h == nil {
		return func() {}
	}
	e := &watched{name: name, h: h}
	w.mu.Lock()
	w.watched = append(w.watched, e)
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if e.removed {
			return
		}
		e.removed = true
		if i := slices.Index(w.watched, e); i >= 0 {
			w.watched = slices.Delete(w.watched, i, i+1)
		}
	}
}

// Run checks every watched Heartbeat each CheckInterval, calling OnStuck
// and OnRecovered from the calling goroutine, until ctx is done. It starts
// no other goroutine.
//
// Run returns nil once ctx is done (cancelling ctx is the normal way to stop
// it). It returns [ErrAlreadyRunning] at once if another Run of the same
// Watchdog has not returned, and an error wrapping [ErrInvalidArgument] for
// a nil ctx or a Watchdog not made by [NewWatchdog]. Run may be called
// again after it returns; stuck state carries over.
func (w *Watchdog) Run(ctx context.Context) error {
	if w == nil || w.cfg.CheckInterval <= 0 {
		return fmt.Errorf("%w: Watchdog.Run: the Watchdog was not created with NewWatchdog", ErrInvalidArgument)
	}
	if ctx == nil {
		return fmt.Errorf("%w: Watchdog.Run: ctx is nil; want a context.Context", ErrInvalidArgument)
	}
	if !w.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer w.running.Store(false)

	t := time.NewTicker(w.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.check()
		}
	}
}

type event struct {
	recovered bool
	sh        StuckHandler
}

// check looks at every watched Heartbeat once, updates the stuck state under
// the lock, and then calls the callbacks without holding it, so that they
// may call Watch or unwatch.
func (w *Watchdog) check() {
	var events []event
	w.mu.Lock()
	for _, e := range w.watched {
		since, elapsed := e.h.since()
		if e.stuck && !since.Equal(e.report.Since) {
			// A beat was observed since the episode began.
			e.stuck = false
			events = append(events, event{recovered: true, sh: StuckHandler{
				Name: e.name, Since: e.report.Since, Elapsed: since.Sub(e.report.Since),
			}})
		}
		if elapsed < w.cfg.Threshold {
			continue
		}
		e.report = StuckHandler{Name: e.name, Since: since, Elapsed: elapsed}
		if !e.stuck {
			e.stuck = true
			events = append(events, event{sh: e.report})
		}
	}
	w.mu.Unlock()

	for _, ev := range events {
		if ev.recovered {
			if w.cfg.OnRecovered != nil {
				w.cfg.OnRecovered(ev.sh)
			}
		} else if w.cfg.OnStuck != nil {
			w.cfg.OnStuck(ev.sh)
		}
	}
}

// Stuck returns a snapshot of the watched handlers that were stuck at the
// latest check, in the order they were watched, each with its Elapsed as of
// that check. It returns nil when none is stuck. Safe for concurrent use.
func (w *Watchdog) Stuck() []StuckHandler {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []StuckHandler
	for _, e := range w.watched {
		if e.stuck {
			out = append(out, e.report)
		}
	}
	return out
}
