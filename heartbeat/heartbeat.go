package heartbeat

import (
	"sync/atomic"
	"time"
)

// Heartbeat records that one handler is making progress. Create it with
// [New].
//
// All methods are safe for concurrent use by any number of goroutines, and
// accept a nil *Heartbeat (a nil Heartbeat never beats: Beat is a no-op and
// LastBeat returns the zero Time).
//
// A Heartbeat must not be copied after first use.
type Heartbeat struct {
	// Read by every Beat; written by Beat only when it is not already set,
	// so parallel beaters mostly share this cache line read-only.
	pending atomic.Bool

	// last is the monotonic offset from started of the latest observed
	// beat, in nanoseconds, plus one; 0 means "never observed a beat".
	last atomic.Int64

	started time.Time
}

// New returns a Heartbeat that has not beaten yet. It reads time.Now once,
// as the origin its beats are stamped from, so it follows the virtual clock
// inside a testing/synctest bubble.
func New() *Heartbeat {
	return &Heartbeat{started: time.Now()}
}

// Beat marks the handler alive. It never blocks, does no I/O, allocates
// nothing and does not read the clock: it sets an atomic flag, only if it
// is not set already, so many goroutines beating in parallel do not fight
// over a cache line.
//
// The time of the beat is stamped later, by the next observer (see
// [Heartbeat.LastBeat]). Beat is safe for concurrent use; on a nil Heartbeat
// it does nothing.
func (h *Heartbeat) Beat() {
	if h != nil && !h.pending.Load() {
		h.pending.Store(true)
	}
}

// LastBeat stamps a pending beat, if any, with the current time, and
// returns the time of the latest beat observed, or the zero Time if the
// Heartbeat never beat.
//
// Beats are stamped lazily: the time reported is when the first observer
// (a call to LastBeat, usually by the lease owner of package visibility)
// noticed the beat, which is at or after the real beat and at most one
// observer polling period later. The returned Time carries a monotonic
// clock reading, so time.Since(h.LastBeat()) is safe against wall clock
// jumps. Safe for concurrent use; stamps only move forward.
func (h *Heartbeat) LastBeat() time.Time {
	if h == nil {
		return time.Time{}
	}
	if h.pending.Load() && h.pending.Swap(false) {
		d := int64(time.Since(h.started)) + 1
		for old := h.last.Load(); d > old && !h.last.CompareAndSwap(old, d); old = h.last.Load() {
		}
	}
	d := h.last.Load()
	if d == 0 {
		return time.Time{}
	}
	return h.started.Add(time.Duration(d - 1))
}
