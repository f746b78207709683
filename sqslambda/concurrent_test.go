package sqslambda

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// An execution environment of Lambda Managed Instances runs several
// invocations at once: one Handler serves them, opens and checks the
// queue once, and answers each with its own failures.
func TestConcurrentInvocations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		w := &watched{Queue: q}
		opens := 0
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			for range 5 {
				heartbeat.Beat(ctx)
				time.Sleep(time.Second)
			}
			return byBody(nil)(ctx, m)
		}, Config{OpenQueue: opener(t, w, &opens)})
		const n = 4
		evs := make([]events.SQSEvent, n)
		for i := range evs {
			send(t, q, false, "ok", "fail")
			evs[i] = receiveEvent(t, q, 2, 3*time.Second)
		}
		var wg sync.WaitGroup
		failures := make([]int, n)
		for i := range evs {
			wg.Go(func() {
				resp, err := h.Handle(invocation(t, time.Minute), evs[i])
				if err != nil {
					t.Error(err)
				}
				failures[i] = len(resp.BatchItemFailures)
			})
		}
		wg.Wait()
		for i, f := range failures {
			if f != 1 {
				t.Errorf("invocation %d: %d failures, want 1", i, f)
			}
		}
		if _, reads, _ := w.counts(); reads != 1 || opens != 1 {
			t.Errorf("%d attribute reads, %d opens: want 1 each", reads, opens)
		}
		if st := h.Stats(); st.Invocations != n || st.Nacked != n || st.LeasesLost != 0 || st.Extensions < 2*n {
			t.Errorf("stats %+v: want %d invocations, %d nacks, no lease lost", st, n, n)
		}
	})
}
