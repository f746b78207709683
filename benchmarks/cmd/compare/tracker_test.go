package main

import "testing"

func TestTrackerCountsDuplicatesAndCompletes(t *testing.T) {
	tr := newTracker(3)
	for _, b := range []string{body(0), body(1), body(1), body(2), body(1)} {
		tr.finish(tr.start(b))
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
	tr.start(body(0)) // started, never completed
	tr.finish(tr.start(body(1)))
	tr.finish(tr.start(body(1))) // a duplicate completing does not count twice
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
		if i := tr.start(b); i != -1 {
			t.Errorf("start(%q) = %d, want -1", b, i)
		}
		tr.finish(-1)
	}
	if got := tr.unknown.Load(); got != 5 {
		t.Errorf("unknown = %d, want 5", got)
	}
	if _, distinct, _ := tr.counts(); distinct != 0 {
		t.Errorf("distinct = %d, want 0", distinct)
	}
}
