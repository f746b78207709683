package leases

import (
	"slices"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop/visibility"
)

// The lease rule. A lease is looked at every Interval I; at a look it is
// alive if its handler beat since the beat its last extension was earned
// by (a beat is stamped when a look first sees it, so up to I after it
// happened). An alive lease is extended only when its deadline nears:
// within 2.5 I of it (the look that finds it so, and two more before the
// last at I/2 before the deadline, where a failed extension is tried
// again), to E after the stamp of its latest beat. So:
//
//   - a beat before the last look of a lease (I/2 before its deadline) is
//     seen in time, and the deadline that beat earns is E after its stamp:
//     a handler whose beats come at most g apart keeps its lease when
//     E ≥ g + I/2;
//   - a handler that stops beating loses its lease at most E + I after its
//     last beat (the stamp up to I late, then E);
//   - an extension costs one entry every E − 2.5 I or so for a handler that
//     beats at every look (a batch call carries up to 10 entries, and a
//     call that goes out anyway takes the leases that would come due
//     within the next Interval), and none at all for a job that ends
//     before its deadline nears: a job shorter than the visibility timeout
//     less 2.5 I is never extended.
//
// The rule users rely on: a handler that beats at least once per visibility
// timeout VT never loses its message, whatever else runs beside it. Its
// floor is E ≥ VT + I/2, for every lease, so the adaptive choice (Extension
// left zero) never goes below it; it only lengthens a lease, from the gaps
// it observes, as Cloud Pub/Sub's client sizes its ack deadline from the
// 99th percentile of the ack latencies it observed:
//
//	E = clamp(max(VT + I/2, 1.25 G + 1.5 I, 1.25 g + 1.5 I), MinExtensionPeriod, MaxExtensionPeriod)
//
// where G is the 99th percentile of the last gapWindow gaps observed
// between beats of the queue's running handlers (so that the first gap of
// a handler that beats less often than the visibility timeout, like the
// others of its queue, is covered), and g the largest gap observed of this
// lease's own handler (so that a handler whose gaps grow past the
// visibility timeout keeps its lease however few they are among the
// queue's). A quarter more is a margin for jitter. The start of a handler
// counts as a beat (an extension longer than the visibility timeout would
// otherwise let the first gap, from the start to the first beat, lapse at
// the receive's deadline).
//
// A per-lease floor from the lease's own gaps alone (E ≥ 1.25 g + 1.5 I,
// shorter for a lease that beat often) was the alternative: it shortens a
// stuck fast handler's lapse, but a handler that beats fast and then slowly
// (a download, then a long step) would lose its lease at its first slow
// gap, which the promise forbids. Its one gain, the lapse, is still bounded
// by E + I.
//
// A lease that lapses while its handler still runs is watched, and the
// handler's next beat is observed as the gap that was too long (watch), so
// that the queue's G learns it for the next leases.
const (
	// gapWindow is how many of the latest gaps the percentile is taken
	// over.
	gapWindow = 256
	// recompute bounds how often the percentile is computed again (a sort
	// of gapWindow values), unless an observation above it comes.
	recompute = time.Second
)

// Lengths chooses the extensions of one queue's leases: the adaptive
// choice from the gaps observed, or the fixed Extension. It outlives a
// Manager where the leases of one queue are served by many (sqslambda: one
// per invocation). Safe for concurrent use.
type Lengths struct {
	cfg visibility.Config // with its defaults

	mu   sync.Mutex
	gaps window // beat gaps of running handlers
}

// NewLengths returns the Lengths of cfg (with defaults applied; see
// withDefaults), with nothing observed yet.
func NewLengths(cfg visibility.Config) *Lengths {
	return &Lengths{cfg: withDefaults(cfg)}
}

// adaptive reports whether the extension is chosen from observations.
func (ls *Lengths) adaptive() bool {
	c := ls.cfg
	return !c.Disabled && !c.FixedInterval && c.Extension == 0
}

// Bounds are the least and the most extension an adaptive choice or a
// handler's own (SetExtension) may ask for, for a message received with
// visibility timeout vt.
func (ls *Lengths) Bounds(vt time.Duration) (lo, hi time.Duration) {
	lo, hi = ls.cfg.MinExtensionPeriod, ls.cfg.MaxExtensionPeriod
	if hi == 0 {
		hi = max(defaultMaxExtensionPeriod, vt, lo)
	}
	return lo, hi
}

// extension is what an extension of a lease received with visibility
// timeout vt, whose own handler's largest observed gap is gap (0: none
// yet), asks for, unless its handler set its own (SetExtension).
func (ls *Lengths) extension(vt, gap time.Duration) time.Duration {
	switch {
	case ls.cfg.Extension > 0:
		return ls.cfg.Extension
	case !ls.adaptive():
		return vt
	}
	i := ls.cfg.Interval
	need := func(g time.Duration) time.Duration { return g + g/4 + i*3/2 }
	ls.mu.Lock()
	g, n := ls.gaps.p99()
	ls.mu.Unlock()
	e := vt + i/2
	if n > 0 {
		e = max(e, need(g))
	}
	if gap > 0 {
		e = max(e, need(gap))
	}
	lo, hi := ls.Bounds(vt)
	return min(max(e, lo), hi)
}

// gap records an observed gap between two beats of a running handler.
func (ls *Lengths) gap(d time.Duration) {
	if !ls.adaptive() {
		return
	}
	ls.mu.Lock()
	ls.gaps.add(d)
	ls.mu.Unlock()
}

// Choice is what the adaptive choice stands at: the extension a lease
// received with visibility timeout vt gets before its handler's own gaps
// are known (Extension), and the 99th percentile of the queue's beat gaps
// it comes from (BeatGap; 0 before any, and with a fixed Extension). Safe
// for concurrent use.
func (ls *Lengths) Choice(vt time.Duration) (extension, beatGap time.Duration) {
	extension = ls.extension(vt, 0)
	if ls.adaptive() {
		ls.mu.Lock()
		beatGap, _ = ls.gaps.p99()
		ls.mu.Unlock()
	}
	return extension, beatGap
}

// window keeps the latest gapWindow observations and their 99th
// percentile, computed again at most once per recompute unless a larger
// observation comes.
type window struct {
	vals   [gapWindow]time.Duration
	n      int // observations kept, ≤ gapWindow
	next   int // where the next goes
	p      time.Duration
	at     time.Time // when p was computed; zero: never
	stale  bool      // observations came since
	sorted [gapWindow]time.Duration
}

func (w *window) add(d time.Duration) {
	w.vals[w.next] = d
	w.next = (w.next + 1) % gapWindow
	w.n = min(w.n+1, gapWindow)
	w.stale = true
	if d > w.p {
		w.at = time.Time{} // up at once
	}
}

// p99 returns the 99th percentile of the observations (their largest
// while fewer than 100) and how many there are.
func (w *window) p99() (time.Duration, int) {
	if w.stale && (w.at.IsZero() || time.Since(w.at) >= recompute) {
		s := w.sorted[:w.n]
		copy(s, w.vals[:w.n])
		slices.Sort(s)
		w.p = s[(w.n*99+99)/100-1]
		w.at, w.stale = time.Now(), false
	}
	return w.p, w.n
}
