package checkpoint_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/internal/harness/jobstores"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// ackLosing is a Mailbox whose first Delete reports success and deletes
// nothing: the ack of a finished job whose answer was lost with the
// delete (the process died after sending it and before it was applied).
type ackLosing struct {
	sqsloop.Mailbox
	lost atomic.Bool
}

func (a *ackLosing) Delete(ctx context.Context, handles []string) ([]error, error) {
	if a.lost.CompareAndSwap(false, true) {
		return make([]error, len(handles)), nil
	}
	return a.Mailbox.Delete(ctx, handles)
}

// unacked is a middleware (outside the checkpoint middleware) that turns
// the first run's result into a plain failure, so that its message is
// nacked and comes back: the ack (or the dead-letter copy) a kill, a lost
// lease or a spent drain budget never lets happen after a handler
// returned.
func unacked() sqsloop.Middleware {
	var first atomic.Bool
	return func(next sqsloop.Handler) sqsloop.Handler {
		return func(ctx context.Context, m *sqsloop.Message) error {
			err := next(ctx, m)
			if first.CompareAndSwap(false, true) {
				return sqsloop.NackAfter(errors.New("the process died before the ack"), 0)
			}
			return err
		}
	}
}

// A 5-step job that checkpoints every step, whose first run ends but whose
// ack (or dead-letter copy) is never made, comes back and is never run
// again from step 0: a job that succeeded is acked without running, one
// that failed for good goes to the dead-letter queue without running; on
// every store, under a consumer. Before the mark (the checkpoint deleted
// when the handler returned) the redelivery ran all 5 steps again.
func TestFinishedJobIsNotRunAgainAfterALostAck(t *testing.T) {
	jobstores.Each(t, func(t *testing.T, store jobstate.Store) {
		for _, tc := range []struct {
			name   string
			lose   string // "answer": the delete's answer lost; "ack": no ack made
			result error
		}{
			{"done, ack never made", "ack", nil},
			{"done, delete's answer lost", "answer", nil},
			{"failed for good, dead-letter copy never made", "ack", sqsloop.Permanent(errors.New("no such image"))},
		} {
			b := new(memmailbox.Broker)
			q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 2 * time.Second, MaxReceiveCount: 10})
			if err != nil {
				t.Fatal(err)
			}
			mailboxtest.SendBodies(t.Context(), t, q, "render")
			cp, err := checkpoint.New(store, checkpoint.Config{Queue: jobstores.Namespace(t), Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var steps []int
			handler := func(ctx context.Context, m *sqsloop.Message) error {
				var p progress
				if _, err := checkpoint.LoadJSON(ctx, &p); err != nil {
					return err
				}
				for ; p.Step < 5; p.Step++ {
					mu.Lock()
					steps = append(steps, p.Step)
					mu.Unlock()
					time.Sleep(100 * time.Millisecond)
					if err := checkpoint.SaveJSON(ctx, progress{Step: p.Step + 1}); err != nil {
						return err
					}
				}
				return tc.result
			}
			var mb sqsloop.Mailbox = q
			mws := []sqsloop.Middleware{cp.Middleware}
			if tc.lose == "answer" {
				mb = &ackLosing{Mailbox: q}
			} else {
				mws = append([]sqsloop.Middleware{unacked()}, mws...)
			}
			c, err := consumer.New(mb, handler, consumer.Config{VisibilityTimeout: 2 * time.Second, WaitTime: time.Second,
				Visibility: visibility.Config{Interval: 500 * time.Millisecond, Extension: 2 * time.Second},
				Backoff:    func(int) time.Duration { return 0 }, Middleware: mws, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			for { // until the job is acked or dead-lettered
				time.Sleep(100 * time.Millisecond)
				if a, _ := q.QueueAttributes(t.Context()); a.ApproximateMessages+a.ApproximateMessagesInFlight+a.ApproximateMessagesDelayed == 0 {
					break
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if len(steps) != 5 {
				t.Errorf("%s: steps run %v, want each of the 5 once", tc.name, steps)
			}
			mu.Unlock()
			st := cp.Stats()
			if st.Finished != 1 || st.Done+st.Permanent != 1 || st.MarkErrors != 0 {
				t.Errorf("%s: stats %+v, want 1 job marked finished, 1 delivery answered from the mark", tc.name, st)
			}
			if tc.result != nil {
				mailboxtest.ReceiveN(t.Context(), t, b.Queue("jobs-dlq"), 1, time.Second, time.Minute) // the job's copy
			}
			b.Close()
		}
	})
}

// A finished job's mark lasts Config.Retention from the job's end, as a
// checkpoint lasts it from its last save: a delivery within it is
// answered from the mark, one after it runs the job.
func TestMarkExpiresWithRetention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cp, err := checkpoint.New(&jobstate.Memory{}, checkpoint.Config{Retention: time.Hour, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		runs := 0
		h := func(ctx context.Context, m *sqsloop.Message) error {
			runs++
			return checkpoint.Save(ctx, []byte("step 1"))
		}
		for n, wait := range []time.Duration{0, 59 * time.Minute, 2 * time.Minute} {
			time.Sleep(wait)
			if err := call(t, cp, &sqsloop.Message{ID: "m-1", ReceiveCount: n + 1}, h); err != nil {
				t.Fatal(err)
			}
		}
		if runs != 2 {
			t.Errorf("the job ran %d times (at 0, 59 min, 61 min, Retention 1 h), want 2: once, and again after the mark expired", runs)
		}
	})
}
