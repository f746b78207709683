package sqslambda

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// timeouts is a Queue that records the visibility timeout each extension
// asks for.
type timeouts struct {
	Queue
	mu  sync.Mutex
	got []time.Duration
}

func (q *timeouts) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	q.mu.Lock()
	for _, c := range changes {
		q.got = append(q.got, c.Timeout)
	}
	q.mu.Unlock()
	return q.Queue.ChangeVisibility(ctx, changes)
}

func (q *timeouts) asked() []time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]time.Duration(nil), q.got...)
}

// A record's handler sets its own extension on Lambda as under a consumer
// (sqsloop.SetExtension): beating every 40 s on a 30 s queue, it keeps
// its message, each extension asking for the 1 min it set.
func TestSetExtensionOnLambda(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second})
		w := &timeouts{Queue: q}
		send(t, q, false, "slow")
		ev := receiveEvent(t, q, 1, 30*time.Second)
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			if err := sqsloop.SetExtension(ctx, time.Minute); err != nil {
				return err
			}
			for range 4 {
				heartbeat.Beat(ctx)
				time.Sleep(40 * time.Second)
			}
			return nil
		}, Config{OpenQueue: opener(t, w, nil)})
		resp, err := h.Handle(invocation(t, 15*time.Minute), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("resp %v, err %v: want the record processed", resp, err)
		}
		if st := h.Stats(); st.LeasesLost != 0 {
			t.Fatalf("stats %+v: the lease was lost", st)
		}
		asked := w.asked()
		if len(asked) < 4 {
			t.Fatalf("extensions %v, want one per beat", asked)
		}
		for _, d := range asked { // 1 min after the look that saw a beat, sent as the deadline nears
			if d > time.Minute || d < time.Minute-15*time.Second {
				t.Fatalf("extensions %v, want each up to 1m after a beat", asked)
			}
		}
	})
}

// What the lease owner learns in one invocation serves the next: a handler
// beating every 40 s loses its first 30 s lease, and keeps the one of the
// next invocation, extended by the choice the first one's beats gave.
func TestLeaseLengthsOutliveAnInvocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second})
		send(t, q, false, "first", "second")
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			for range 4 {
				heartbeat.Beat(ctx)
				time.Sleep(40 * time.Second)
			}
			return nil
		}, Config{OpenQueue: opener(t, q, nil)})
		for i, want := range []int64{1, 1} {
			ev := receiveEvent(t, q, 1, 30*time.Second)
			if _, err := h.Handle(invocation(t, 15*time.Minute), ev); err != nil {
				t.Fatal(err)
			}
			if lost := h.Stats().LeasesLost; lost != want {
				t.Fatalf("after invocation %d: %d leases lost, want %d", i+1, lost, want)
			}
		}
	})
}
