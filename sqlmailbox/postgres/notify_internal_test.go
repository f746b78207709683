package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sentNotes records the NOTIFYs a notifier sends, with their (virtual)
// times.
type sentNotes struct {
	mu       sync.Mutex
	at       []time.Duration // since start
	payloads []string
	base     time.Time
}

func (s *sentNotes) exec(_ context.Context, payload string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at, s.payloads = append(s.at, time.Since(s.base)), append(s.payloads, payload)
	return nil
}

// A burst of changes to one queue, 3 ms apart for 25 ms, costs one NOTIFY
// per 10 ms window, and none is dropped: the first change carries one
// (lead), the others are covered by one sent at the end of each window,
// after them (follow), which counts their messages. Another queue's changes
// are limited apart. Virtual time: the instants are exact.
func TestNotifierLimitsWithoutDropping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sentNotes{base: time.Now()}
		n := newNotifier(s.exec, 10*time.Millisecond, "me")
		var carried []string
		for i := range 9 { // a change of 2 messages at 0, 3, …, 24 ms
			if p := n.lead(1, 2); p != nil {
				carried = append(carried, fmt.Sprint(time.Since(s.base), " ", *p))
			} else {
				n.follow(1, 2)
			}
			if i == 1 {
				if err := n.notify(t.Context(), 2, 5); err != nil { // another queue: not held back
					t.Fatal(err)
				}
			}
			time.Sleep(3 * time.Millisecond)
		}
		time.Sleep(time.Second)
		n.close()
		if want := []string{"0s 1 2 me"}; !slices.Equal(carried, want) {
			t.Errorf("changes that carried their own NOTIFY: %q, want %q", carried, want)
		}
		// Held-back changes at 3–9 ms are covered at 10 ms, those at 12–18
		// ms at 20 ms (a window after the one sent at 10 ms), those at 21
		// and 24 ms at 30 ms.
		wantAt := []time.Duration{3 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}
		wantPayloads := []string{"2 5 me", "1 6 me", "1 6 me", "1 4 me"}
		if !slices.Equal(s.at, wantAt) || !slices.Equal(s.payloads, wantPayloads) {
			t.Errorf("NOTIFYs sent at %v with %q, want at %v with %q", s.at, s.payloads, wantAt, wantPayloads)
		}
	})
}

// Close sends at once what the notifier still holds, and follow does
// nothing after it.
func TestNotifierCloseSendsWhatItHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sentNotes{base: time.Now()}
		n := newNotifier(s.exec, time.Hour, "me")
		if n.lead(7, 1) == nil {
			t.Fatal("the first change did not lead")
		}
		n.follow(7, 3) // held for the hour's end
		n.close()
		if !slices.Equal(s.payloads, []string{"7 3 me"}) || s.at[0] != 0 {
			t.Errorf("NOTIFYs at Close: %q at %v, want queue 7's at once", s.payloads, s.at)
		}
		n.follow(8, 1)
		time.Sleep(2 * time.Hour)
		if len(s.payloads) != 1 {
			t.Errorf("follow after Close sent %q", s.payloads[1:])
		}
	})
}

// A payload names the queue, its messages and the Store; an older
// sqsloop's, the queue alone (every long poll wakes); anything else is no
// payload of ours.
func TestParsePayload(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"12 3 ab12", "12 3 ab12 true"},
		{"12", "12 -1  true"},
		{"12 0 ab12", "12 -1 ab12 true"},
		{"x 3 ab", "0 0  false"},
		{"", "0 0  false"},
	} {
		id, n, tag, ok := parsePayload(c.in)
		if got := fmt.Sprint(id, " ", n, " ", tag, " ", ok); got != c.want {
			t.Errorf("parsePayload(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
