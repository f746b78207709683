package main

import (
	"testing"
	"time"
)

// handled records one complete handling of body b by worker 0.
func (t *tracker) handled(b string) int {
	i := t.begin(0, delivery{body: b})
	t.end(0, i, true)
	return i
}

func TestTrackerCountsDuplicatesAndCompletes(t *testing.T) {
	tr := newTracker(3)
	for _, b := range []string{body(0), body(1), body(1), body(2), body(1)} {
		tr.handled(b)
		select {
		case <-tr.done:
			if tr.completedCount() != 3 {
				t.Fatalf("done closed with %d of 3 completed", tr.completedCount())
			}
		default:
		}
	}
	select {
	case <-tr.done:
	default:
		t.Fatal("done not closed after every message completed")
	}
	handled, distinct, dup := tr.counts()
	if handled != 5 || distinct != 3 || dup != 2 {
		t.Errorf("counts() = %d handled, %d distinct, %d duplicates; want 5, 3, 2", handled, distinct, dup)
	}
}

func TestTrackerNotDoneUntilEveryMessageCompletes(t *testing.T) {
	tr := newTracker(2)
	tr.end(0, tr.begin(0, delivery{body: body(0)}), false) // returned an error
	tr.begin(0, delivery{body: body(0)})                   // started, never completed
	tr.handled(body(1))
	tr.handled(body(1)) // a duplicate completing does not count twice
	select {
	case <-tr.done:
		t.Fatal("done closed with message 0 not completed")
	default:
	}
	if got := tr.completedCount(); got != 1 {
		t.Errorf("completedCount() = %d, want 1", got)
	}
}

func TestTrackerUnknownBodies(t *testing.T) {
	tr := newTracker(2)
	for _, b := range []string{"hello", "m-2", "m--1", "m-x", "x-1"} {
		if i := tr.begin(0, delivery{body: b}); i != -1 {
			t.Errorf("begin(%q) = %d, want -1", b, i)
		}
		tr.end(0, -1, true)
	}
	if got := tr.unknown.Load(); got != 5 {
		t.Errorf("unknown = %d, want 5", got)
	}
	if _, distinct, _ := tr.counts(); distinct != 0 {
		t.Errorf("distinct = %d, want 0", distinct)
	}
}

func TestTrackerLargestReceiveCount(t *testing.T) {
	tr := newTracker(2)
	for _, n := range []int{1, 3, 0, 2} {
		tr.end(0, tr.begin(0, delivery{body: body(0), receiveCount: n}), true)
	}
	if got := tr.maxReceiveCount.Load(); got != 3 {
		t.Errorf("maxReceiveCount = %d, want 3", got)
	}
	if tr.tl != nil {
		t.Error("a tracker keeps no timeline unless given one")
	}
}

func TestReceiveCountOf(t *testing.T) {
	for attrs, want := range map[*map[string]string]int{
		{"ApproximateReceiveCount": "4"}: 4, {"ApproximateReceiveCount": "x"}: 0, {}: 0,
	} {
		if got := receiveCountOf(*attrs); got != want {
			t.Errorf("receiveCountOf(%v) = %d, want %d", *attrs, got, want)
		}
	}
}

// TestTimelineStats computes the spread and the buffer waits of a known
// timeline of two workers of 2 handler slots each (times in seconds from
// t0; "B 2" means worker B now runs 2 handlers):
//
//	0     B starts m0, m1 (arrived at B at 0)          B 2: B full until 3
//	1     A starts m2 (arrived at A at 1)               A 1
//	1.01  A starts m3 (arrived at 1): B full, wait 0    A 2
//	3     B ends one                                    B 1: B has a free slot
//	4     A ends one                                    A 1
//	4.02  B starts m4 (arrived at B at 4): A free since 4, wait 0.02
//	5     B ends one                                    B 1
//	6     A starts m5 (arrived at A at 1): B free 3–4.02 and 5–6, wait 2.02
//	7     every message handled once (until)
//	7.5   B starts m6, whose receive was never seen: no wait counted
//	8     A starts m0 again (arrived at 2): B free 3–4.02 and 5–7 (not
//	      after until), wait 3.02
func TestTimelineStats(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	a := newArrivals()
	a.record(at(0), "r0", "r1")
	a.record(at(1), "r2", "r3", "r5")
	a.record(at(2), "r0'")
	a.record(at(4), "r4")
	tl := newTimeline(2, a)
	const A, B = 0, 1
	tl.begin(B, 0, "r0", at(0))
	tl.begin(B, 1, "r1", at(0))
	tl.begin(A, 2, "r2", at(1))
	tl.begin(A, 3, "r3", at(1.01))
	tl.end(B, at(3))
	tl.end(A, at(4))
	tl.begin(B, 4, "r4", at(4.02))
	tl.end(B, at(5))
	tl.begin(A, 5, "r5", at(6))
	tl.begin(B, 6, "unseen", at(7.5))
	tl.begin(A, 0, "r0'", at(8))

	st := tl.stats(2, at(7))
	near := func(got time.Duration, want float64) bool {
		return (got - time.Duration(want*float64(time.Second))).Abs() < time.Microsecond
	}
	if len(st.handled) != 2 || st.handled[A] != 4 || st.handled[B] != 4 {
		t.Errorf("handled = %v, want [4 4]", st.handled)
	}
	if !near(st.largestWait, 3.02) {
		t.Errorf("largestWait = %v, want 3.02s", st.largestWait)
	}
	if !near(st.totalWait, 0.02+2.02+3.02) {
		t.Errorf("totalWait = %v, want 5.06s", st.totalWait)
	}
	if st.waitedLong != 2 {
		t.Errorf("waitedLong = %d, want 2 (m5 and m0's duplicate; m4's 20 ms is within a round trip)", st.waitedLong)
	}
	if st.noArrival != 1 {
		t.Errorf("noArrival = %d, want 1", st.noArrival)
	}

	// Without until (never all handled), m0's duplicate waits to its start:
	// B free 3–4.02 and 5–7.5, when m6 fills it again.
	if st := tl.stats(2, time.Time{}); !near(st.largestWait, 3.52) {
		t.Errorf("largestWait without until = %v, want 3.52s", st.largestWait)
	}
}

func TestOthersFree(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// Three workers of 1 slot: B busy 0–2, C busy 1–3.
	changes := []slotChange{
		{at: at(0), worker: 1, running: 1},
		{at: at(1), worker: 2, running: 1},
		{at: at(2), worker: 1, running: 0},
		{at: at(3), worker: 2, running: 0},
	}
	for _, c := range []struct {
		w        int
		from, to float64
		want     float64
	}{
		{w: 0, from: 0, to: 4, want: 3},     // every other busy only 1–2
		{w: 0, from: 1, to: 2, want: 0},     // both busy
		{w: 0, from: 1.5, to: 1.5, want: 0}, // empty
		{w: 0, from: 2, to: 1, want: 0},     // reversed
		{w: 1, from: 0, to: 4, want: 4},     // A (no change) always free
		{w: 2, from: 0.5, to: 2.5, want: 2}, // A always free
	} {
		got := othersFree(changes, 3, c.w, 1, at(c.from), at(c.to))
		if want := time.Duration(c.want * float64(time.Second)); (got - want).Abs() > time.Microsecond {
			t.Errorf("othersFree(worker %d, %v–%v) = %v, want %v", c.w, c.from, c.to, got, want)
		}
	}
}
