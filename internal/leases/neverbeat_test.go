package leases

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// lostEvents keeps the LeaseLost events, by message ID.
type lostEvents struct {
	sqsloop.NopObserver
	mu   sync.Mutex
	seen map[string]sqsloop.LeaseLostEvent
}

func (o *lostEvents) LeaseLost(m *sqsloop.Message, e sqsloop.LeaseLostEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string]sqsloop.LeaseLostEvent{}
	}
	o.seen[m.ID] = e
}

func (o *lostEvents) get(id string) (sqsloop.LeaseLostEvent, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.seen[id]
	return e, ok
}

// Whether a lapsed lease counts as never beaten is decided once, when the
// loss is first seen, by whoever sees it, and is what the LeaseLost event,
// the count and Returned all say: a lease whose handler began, then did not
// beat (the heartbeat's earlier beats do not count), never beat; one that
// lapsed before its handler began did not; one whose handler beat after it
// began did not either. A loss seen first by Returned (before the loop's
// look at the deadline) is the one the loop reports.
func TestNeverBeatIsDecidedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var obs lostEvents
		cfg := fastConfig // Interval 1 s, Extension 3 s
		cfg.Observer = &obs
		m := running(t, &recorder{}, cfg)
		hb := heartbeat.New()
		hb.Beat() // an earlier message of the group, before these began
		first := m.Hold(message("silent", 3*time.Second), hb, nil)
		waiting := m.Hold(message("waiting", 3*time.Second), hb, nil)
		beating := m.Hold(message("beating", 3*time.Second), heartbeat.New(), nil)
		if err := first.Begin(); err != nil {
			t.Fatal(err)
		}
		if err := beating.Begin(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		beating.hb.Beat() // once, then silent: it earns one extension, then lapses
		time.Sleep(5 * time.Second)

		lost, never := first.Returned()
		if !errors.Is(lost, visibility.ErrLeaseLapsed) || !never {
			t.Errorf("silent handler: Returned %v, never beat %v; want lapsed, never beat", lost, never)
		}
		if err := waiting.Begin(); !errors.Is(err, visibility.ErrLeaseLapsed) {
			t.Errorf("waiting: Begin %v, want lapsed", err)
		}
		if _, never := waiting.Returned(); never {
			t.Error("waiting: counted as never beaten, but its handler never began")
		}
		if lost, never := beating.Returned(); lost == nil || never {
			t.Errorf("beating once: Returned %v, never beat %v; want lost, not never beaten", lost, never)
		}
		time.Sleep(time.Second) // the loop reports
		for id, want := range map[string]bool{"silent": true, "waiting": false, "beating": false} {
			if e, ok := obs.get(id); !ok || e.NeverBeat != want || e.Reason != sqsloop.LostNoBeats {
				t.Errorf("%s: LeaseLost %+v (reported %v), want no_beats, never beat %v", id, e, ok, want)
			}
		}
		if st := m.Stats(); st.LeasesLost != 3 || st.LeasesLostNeverBeat != 1 {
			t.Errorf("stats: %d lost, %d never beat; want 3 and 1", st.LeasesLost, st.LeasesLostNeverBeat)
		}
		first.Ack()
		waiting.GiveBack()
		beating.Ack()
	})
}
