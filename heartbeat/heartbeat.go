package heartbeat

import (
	"sync"
	"sync/atomic"
	"time"
)

// Heartbeat records that one handler is making progress. Create it with
// [New]; the zero value has no start time and reports a meaningless
// [Heartbeat.Elapsed].
//
// All methods are safe for concurrent use by any number of goroutines, and
// all of them accept a nil *Heartbeat (a nil Heartbeat never beats: Beat is a
// no-op, LastBeat and Started return the zero Time, Elapsed returns 0).
//
// A Heartbeat must not be copied after first use.
type Heartbeat struct {
	// Read by every Beat; written by Beat only when it is not already set,
	// so parallel beaters mostly share this cache line read-only.
	pending   atomic.Bool
	callbacks atomic.Pointer[[]callback] // immutable; nil when none

	// last is the monotonic offset from started of the latest observed
	// beat, in nanoseconds, plus one; 0 means "never observed a beat".
	last atomic.Int64

	started time.Time

	mu     sync.Mutex // serialises AddCallback and RemoveCallback
	nextID CallbackID
}

// New returns a Heartbeat that has not beaten yet. It records time.Now as its
// start time (see [Heartbeat.Started]), so it follows the virtual clock
// inside a testing/synctest bubble.
func New() *Heartbeat {
	return &Heartbeat{started: time.Now()}
}

// Beat marks the handler alive. It never blocks, does no I/O, allocates
// nothing and does not read the clock: it sets an atomic flag (only if it is
// not set already, so many goroutines beating in parallel do not fight over
// a cache line) and then, only if callbacks were registered with
// [Heartbeat.AddCallback], calls each of them synchronously on the calling
// goroutine.
//
// The time of the beat is stamped later, by the next observer (see
// [Heartbeat.LastBeat]). Beat is safe for concurrent use; on a nil Heartbeat
// it does nothing.
func (h *Heartbeat) Beat() {
	if h == nil {
		return
	}
	if !h.pending.Load() {
		h.pending.Store(true)
	}
	if cbs := h.callbacks.Load(); cbs != nil {
		for _, c := range *cbs {
			c.f()
		}
	}
}

// observe stamps the pending beat, if any, with the current time. Stamps
// only move forward: two observers racing cannot move the last beat back.
func (h *Heartbeat) observe() {
	if !h.pending.Load() || !h.pending.Swap(false) {
		return
	}
	d := int64(time.Since(h.started)) + 1
	for {
		old := h.last.Load()
		if d <= old || h.last.CompareAndSwap(old, d) {
			return
		}
	}
}

// LastBeat observes pending beats and returns the time of the latest
// observed beat, or the zero Time if the Heartbeat never beat.
//
// Beats are stamped lazily: the time reported is when the first observer
// (a call to LastBeat or [Heartbeat.Elapsed], the lease extender, a
// [Watchdog]) noticed the beat, which is at or after the real beat and at
// most one observer polling period later. The returned Time carries a
// monotonic clock reading, so time.Since(h.LastBeat()) is safe against wall
// clock jumps. Safe for concurrent use.
func (h *Heartbeat) LastBeat() time.Time {
	if h == nil {
		return time.Time{}
	}
	h.observe()
	d := h.last.Load()
	if d == 0 {
		return time.Time{}
	}
	return h.started.Add(time.Duration(d - 1))
}

// Elapsed observes pending beats and returns the time since the latest
// observed beat (see [Heartbeat.LastBeat] for its precision), or since
// [New] if the Heartbeat never beat. It is never negative; a long Elapsed
// means a stuck handler. Safe for concurrent use; 0 on a nil Heartbeat.
func (h *Heartbeat) Elapsed() time.Duration {
	_, elapsed := h.since()
	return elapsed
}

// since observes, then returns the latest observed beat (or the start time
// if none) and the time elapsed since it.
func (h *Heartbeat) since() (time.Time, time.Duration) {
	if h == nil {
		return time.Time{}, 0
	}
	h.observe()
	now := time.Since(h.started)
	d := h.last.Load()
	if d == 0 {
		return h.started, max(now, 0)
	}
	at := time.Duration(d - 1)
	return h.started.Add(at), max(now-at, 0)
}

// Started returns the time [New] created the Heartbeat (with a monotonic
// clock reading). It is the zero Time for a nil or zero-value Heartbeat.
// Safe for concurrent use.
func (h *Heartbeat) Started() time.Time {
	if h == nil {
		return time.Time{}
	}
	return h.started
}
