package sqlmailbox

import (
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// TestWholeLooksAreSpacedByWhatTheyCost checks when a receive looks at the
// whole queue: every second while a whole look is quick, a hundred times
// as long as the last one took once that is longer (an old snapshot keeps
// dead entries for it to step over), 30 s at most, and always as a long
// poll's last look.
func TestWholeLooksAreSpacedByWhatTheyCost(t *testing.T) {
	var l looks
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	pos := driver.Position{At: at(0), ID: 7}
	whole := func(now time.Time, last bool) bool {
		from, _ := l.plan(1, now, last, false)
		return from.IsZero()
	}

	if !whole(at(0), false) {
		t.Fatal("the first look of a queue is not whole")
	}
	l.took(1, pos)
	if whole(at(500*time.Millisecond), false) {
		t.Fatal("a look half a second after a whole one is whole")
	}
	if !whole(at(500*time.Millisecond), true) {
		t.Fatal("a long poll's last look is not whole")
	}
	if !whole(at(1600*time.Millisecond), false) {
		t.Fatal("no whole look 1.1 s after the last one (a quick one)")
	}

	l.lookedWhole(1, 200*time.Millisecond) // the one at 1.6 s took 200 ms
	for _, c := range []struct {
		after time.Duration
		whole bool
	}{{time.Second, false}, {19 * time.Second, false}, {20 * time.Second, true}} {
		if got := whole(at(1600*time.Millisecond+c.after), false); got != c.whole {
			t.Errorf("%v after a whole look of 200 ms: whole %v, want %v", c.after, got, c.whole)
		}
	}
	if due, want := l.fullDue(1), at(21600*time.Millisecond+20*time.Second); !due.Equal(want) {
		t.Errorf("next whole look due at %v, want %v (the oldest long poll wakes then)", due, want)
	}

	l.lookedWhole(1, 2*time.Second) // 100 times would be 200 s
	if whole(at(21600*time.Millisecond+29*time.Second), false) {
		t.Error("a whole look 29 s after one of 2 s")
	}
	if !whole(at(21600*time.Millisecond+30*time.Second), false) {
		t.Error("no whole look 30 s after one of 2 s: the spacing is not capped at 30 s")
	}

	l.lookedWhole(1, 3*time.Millisecond)
	if !whole(at(51600*time.Millisecond+time.Second), false) {
		t.Error("no whole look a second after a quick one again")
	}
}
