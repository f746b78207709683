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

// slowAttributes is a Queue whose QueueAttributes waits until release is
// closed or its context ends.
type slowAttributes struct {
	Queue
	release chan struct{}
}

func (s slowAttributes) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	select {
	case <-s.release:
		return s.Queue.QueueAttributes(ctx)
	case <-ctx.Done():
		return sqsloop.QueueAttributes{}, ctx.Err()
	}
}

// The queue's check (GetQueueAttributes, up to 5 s at the cold start) holds
// no lock another invocation waits on: while a 10-minute invocation's
// check hangs, a 2-second one waits for it no longer than its own check
// would take (a quarter of its time), runs its record without a client,
// and answers before its deadline; the check goes on, and once it is in,
// invocations use the client.
func TestSlowCheckDoesNotBlockAnotherInvocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: time.Minute, MaxReceiveCount: 5})
		slow := slowAttributes{Queue: q, release: make(chan struct{})}
		h := mustNew(t, byBody(nil), Config{OpenQueue: opener(t, slow, nil)})
		send(t, q, false, "ok 1", "ok 2", "ok 3")
		first, second, third := receiveEvent(t, q, 1, time.Minute), receiveEvent(t, q, 1, time.Minute), receiveEvent(t, q, 1, time.Minute)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := h.Handle(invocation(t, 10*time.Minute), first); err != nil {
				t.Error(err)
			}
		}()
		synctest.Wait() // the first invocation's check hangs
		start := time.Now()
		resp, err := h.Handle(invocation(t, 2*time.Second), second)
		if d := time.Since(start); err != nil || len(resp.BatchItemFailures) != 0 || d != 500*time.Millisecond {
			t.Errorf("an invocation of 2 s beside a hanging check: %v, %d failures, after %v; want its record done after waiting 500ms", err, len(resp.BatchItemFailures), d)
		}
		close(slow.release)
		<-done
		if _, err := h.Handle(invocation(t, 2*time.Second), third); err != nil {
			t.Fatal(err)
		}
		if st := h.Stats(); st.Succeeded != 3 || st.Invocations != 3 {
			t.Errorf("stats %+v, want 3 records succeeded", st)
		}
	})
}
