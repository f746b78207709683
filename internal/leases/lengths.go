package leases

import (
	"slices"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop/visibility"
)

// Adaptive lease length (Config.Extension left zero): the lease owner
// chooses each extension from the gaps between beats it observes, as Cloud
// Pub/Sub's client chooses its ack deadline from the 99th percentile of
// the ack latencies it observed, within bounds. The trade, for a
// heartbeat-gated lease looked at every Interval I and extended by E:
//
//   - a healthy handler keeps its lease if every beat is seen at a look
//     before the last one, I/2 before the deadline. A beat is seen at the
//     first look after it (up to I late), so an observed gap can be up to
//     I shorter than the real one: a gap g is safe when E ≥ g + 1.5·I;
//   - a handler that stops beating loses its lease at most E + I after its
//     last beat (the look after it extends once more, then none);
//   - the calls it costs do not depend on E: one extension at each look
//     that finds a new beat, so 3600 s / max(I, gap) per message-hour
//     (divided by up to 10, the entries a batch call carries).
//
// So E is the shortest that keeps the healthy leases, with a margin:
//
//	E = clamp(1.25 × G + 1.5 × I, MinExtensionPeriod, MaxExtensionPeriod)
//
// where G is the 99th percentile of the last gapWindow gaps observed
// between beats of running handlers (a quarter more for jitter, as the
// slowest 1% may expire otherwise). MinExtensionPeriod defaults to 3 × I,
// so that a lease extended at a look is looked at twice more before its
// last look (a failed extension is tried again); a handler that beats at
// every look gets that floor. Cold start: until minGaps gaps are observed,
// over at least the visibility timeout the message was received with (a
// gap can only be seen once it is over: a minute of handlers that each
// beat once at their start says nothing of their next beat), E is not
// below that visibility timeout (the fixed choice), only above it, at
// once, when a gap says so: leases shorten on evidence and lengthen on the
// first sign. A lease that lapses while its handler still runs is watched,
// and the handler's next beat is observed as the gap that was too long
// (watch), so a cold start that was too short corrects itself after one
// lapse.
//
// The handlers' run times are kept too: a lease whose handler is expected
// to return (the 99th percentile of run times) well before its deadline is
// not extended while it is (canWait), so a queue of jobs shorter than the
// visibility timeout costs no extension at all. Once that time has passed,
// the lease is extended no further than an extension at the look that saw
// its handler's last beat would have (afterWait): waiting never lets a
// stuck handler keep its message longer.
const (
	// gapWindow is how many of the latest observations the percentiles
	// are taken over.
	gapWindow = 256
	// minGaps is how many gaps must be observed before E may go below the
	// visibility timeout (and run times before a lease is deferred).
	minGaps = 16
	// recompute bounds how often the percentiles are computed again (a
	// sort of gapWindow values), unless an observation above them comes.
	recompute = time.Second
)

// Lengths chooses the extensions of one queue's leases: the adaptive
// choice from the gaps and run times observed, or the fixed Extension.
// It outlives a Manager where the leases of one queue are served by many
// (sqslambda: one per invocation). Safe for concurrent use.
type Lengths struct {
	cfg visibility.Config // with its defaults

	mu    sync.Mutex
	gaps  window    // beat gaps of running handlers
	runs  window    // handler run times
	since time.Time // when the first gap was observed
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
// timeout vt asks for now, unless its handler set its own.
func (ls *Lengths) extension(vt time.Duration) time.Duration {
	switch {
	case ls.cfg.Extension > 0:
		return ls.cfg.Extension
	case !ls.adaptive():
		return vt
	}
	lo, hi := ls.Bounds(vt)
	ls.mu.Lock()
	g, n := ls.gaps.p99()
	watched := time.Since(ls.since)
	ls.mu.Unlock()
	e := vt
	if n > 0 {
		e = g + g/4 + ls.cfg.Interval*3/2
		if n < minGaps || watched < vt {
			e = max(e, vt)
		}
	}
	return min(max(e, lo), hi)
}

// gap records an observed gap between two beats of a running handler.
func (ls *Lengths) gap(d time.Duration) {
	if !ls.adaptive() {
		return
	}
	ls.mu.Lock()
	if ls.since.IsZero() {
		ls.since = time.Now()
	}
	ls.gaps.add(d)
	ls.mu.Unlock()
}

// ran records a handler's run time.
func (ls *Lengths) ran(d time.Duration) {
	if !ls.adaptive() {
		return
	}
	ls.mu.Lock()
	ls.runs.add(d)
	ls.mu.Unlock()
}

// expectedRun is the 99th percentile of the run times observed, and
// whether enough were (minGaps) to expect it.
func (ls *Lengths) expectedRun() (time.Duration, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	d, n := ls.runs.p99()
	return d, n >= minGaps
}

// Choice is what the adaptive choice stands at: the extension a lease
// received with visibility timeout vt gets (Extension), and the 99th
// percentile of the beat gaps it comes from (BeatGap; 0 before any, and
// with a fixed Extension). Safe for concurrent use.
func (ls *Lengths) Choice(vt time.Duration) (extension, beatGap time.Duration) {
	extension = ls.extension(vt)
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
