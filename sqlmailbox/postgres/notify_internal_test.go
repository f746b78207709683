package postgres

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sentNotes records the NOTIFYs a notifier sends, with their (virtual)
// times.
type sentNotes struct {
	mu   sync.Mutex
	at   []time.Duration // since start
	ids  []int64
	base time.Time
}

func (s *sentNotes) exec(_ context.Context, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at, s.ids = append(s.at, time.Since(s.base)), append(s.ids, id)
	return nil
}

// A burst of changes to one queue, 3 ms apart for 25 ms, costs one NOTIFY
// per 10 ms window, and none is dropped: the first change carries one
// (lead), the others are covered by one sent at the end of each window,
// after them (follow), the last one included. Another queue's changes are
// limited apart. Virtual time: the instants are exact.
func TestNotifierLimitsWithoutDropping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sentNotes{base: time.Now()}
		n := newNotifier(s.exec, 10*time.Millisecond)
		var carried []time.Duration
		for i := range 9 { // a change at 0, 3, …, 24 ms
			if n.lead(1) {
				carried = append(carried, time.Since(s.base))
			} else {
				n.follow(1)
			}
			if i == 1 {
				if err := n.notify(t.Context(), 2); err != nil { // another queue: not held back
					t.Fatal(err)
				}
			}
			time.Sleep(3 * time.Millisecond)
		}
		time.Sleep(time.Second)
		n.close()
		if want := []time.Duration{0}; !slices.Equal(carried, want) {
			t.Errorf("changes that carried their own NOTIFY at %v, want %v", carried, want)
		}
		// Held-back changes at 3–9 ms are covered at 10 ms, those at 12–18
		// ms at 20 ms (a window after the one sent at 10 ms), those at 21
		// and 24 ms at 30 ms.
		wantAt := []time.Duration{3 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}
		wantIDs := []int64{2, 1, 1, 1}
		if !slices.Equal(s.at, wantAt) || !slices.Equal(s.ids, wantIDs) {
			t.Errorf("NOTIFYs sent at %v for queues %v, want at %v for %v", s.at, s.ids, wantAt, wantIDs)
		}
	})
}

// Close sends at once what the notifier still holds, and follow does
// nothing after it.
func TestNotifierCloseSendsWhatItHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sentNotes{base: time.Now()}
		n := newNotifier(s.exec, time.Hour)
		if !n.lead(7) {
			t.Fatal("the first change did not lead")
		}
		n.follow(7) // held for the hour's end
		n.close()
		if !slices.Equal(s.ids, []int64{7}) || s.at[0] != 0 {
			t.Errorf("NOTIFYs at Close: %v at %v, want queue 7's at once", s.ids, s.at)
		}
		n.follow(8)
		time.Sleep(2 * time.Hour)
		if len(s.ids) != 1 {
			t.Errorf("follow after Close sent %v", s.ids[1:])
		}
	})
}
