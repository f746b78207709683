package sqslambda

import (
	"context"
	"maps"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// On Lambda as under a consumer, the lease owner's LeaseLost and the run's
// ProcessEnd say the same of a lost lease whose handler never beat (the
// lease owner decides it once, rules.NeverBeat): in group A, a handler
// that runs without a beat after an earlier record of its group ended
// (which shares its heartbeat) never beat; in group B, a record that lapsed
// while it waited behind a silent one has no handler that could have
// beaten. Before, LeaseLost said the opposite in both cases.
func TestNeverBeatIsOneAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		send(t, q, true, "quick A1", "silent A2", "silent B1", "waiting B2")
		ev := receiveEvent(t, q, 4, 3*time.Second)
		rec := newRecorder()
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			switch {
			case strings.HasPrefix(m.Body, "quick"):
				time.Sleep(500 * time.Millisecond)
			case strings.HasPrefix(m.Body, "silent"):
				time.Sleep(10 * time.Second) // never beats: its 3 s lease lapses
			}
			return nil
		}, Config{OpenQueue: opener(t, q, nil), Observer: rec})
		if _, err := h.Handle(invocation(t, time.Minute), ev); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		lost := map[string]bool{}
		for body, e := range rec.lost {
			lost[body] = e.NeverBeat
		}
		ended := map[string]bool{}
		for body, es := range rec.ends {
			if es[0].Outcome == sqsloop.OutcomeLeaseLost {
				ended[body] = es[0].NeverBeat
			}
		}
		wantLost := map[string]bool{"silent A2": true, "silent B1": true, "waiting B2": false}
		wantEnded := map[string]bool{"silent A2": true, "silent B1": true}
		if !maps.Equal(lost, wantLost) || !maps.Equal(ended, wantEnded) {
			t.Errorf("never beat by LeaseLost %v, by ProcessEnd %v; want %v and %v", lost, ended, wantLost, wantEnded)
		}
		if n := h.Stats().LeasesLostNeverBeat; n != 2 {
			t.Errorf("Stats.LeasesLostNeverBeat %d, want 2", n)
		}
	})
}
