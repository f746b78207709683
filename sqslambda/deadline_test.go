package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
)

// tenRecords is a standard batch of 10 records, "job-0" … "job-9".
func tenRecords() events.SQSEvent {
	var ev events.SQSEvent
	for i := range 10 {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: fmt.Sprintf("id-%d", i), ReceiptHandle: fmt.Sprintf("rh-%d", i), Body: fmt.Sprintf("job-%d", i),
			Attributes: map[string]string{sqsloop.AttrApproximateReceiveCount: "1"}, EventSource: "aws:sqs", EventSourceARN: testARN,
		})
	}
	return ev
}

// starts records when each record's handler started.
type starts struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (s *starts) add(body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	s.at[body] = time.Now()
}

func (s *starts) last() (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var body string
	var at time.Time
	for b, t := range s.at {
		if t.After(at) {
			body, at = b, t
		}
	}
	return body, at
}

// A batch that does not fit in the invocation is cut off: records of 1 s
// each, one at a time, in a 6 s invocation with the default 1.5 s margin.
// Records start at 0, 1, 2, 3 and 4 s; job-4 is cut short at 4.5 s (its
// context ends, cause ErrDeadline); job-5 … job-9 never start. Handle
// answers at 4.5 s, 1.5 s before Lambda would have stopped it, listing
// exactly job-4 … job-9; the last record started 2 s before the deadline.
func TestDeadlineCutsTheBatchOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var st starts
		var causes []error
		var mu sync.Mutex
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			st.add(m.Body)
			select {
			case <-time.After(time.Second):
				return nil
			case <-ctx.Done():
				mu.Lock()
				causes = append(causes, context.Cause(ctx))
				mu.Unlock()
				return context.Cause(ctx)
			}
		}, Config{Concurrency: 1})
		ev := tenRecords()
		begin := time.Now()
		ctx := invocation(t, 6*time.Second)
		deadline, _ := ctx.Deadline()
		resp, err := h.Handle(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		answered := time.Since(begin)
		want := []string{"id-4", "id-5", "id-6", "id-7", "id-8", "id-9"}
		if got := ids(resp); !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want %v", got, want)
		}
		body, at := st.last()
		t.Logf("deadline %v after the start: last record (%s) started %v before it; Handle answered %v before it",
			deadline.Sub(begin), body, deadline.Sub(at), deadline.Sub(begin.Add(answered)))
		if body != "job-4" || deadline.Sub(at) != 2*time.Second {
			t.Errorf("last start %s at %v before the deadline, want job-4 at 2s", body, deadline.Sub(at))
		}
		if answered != 4500*time.Millisecond {
			t.Errorf("answered after %v, want 4.5s (the deadline less the margin)", answered)
		}
		if len(causes) != 1 || !errors.Is(causes[0], ErrDeadline) {
			t.Errorf("causes %v, want job-4's ErrDeadline", causes)
		}
		if s := h.Stats(); s.Started != 5 || s.Succeeded != 4 || s.Failed != 1 || s.CutOff != 5 || s.Abandoned != 0 {
			t.Errorf("stats %+v: want 5 started, 4 succeeded, 1 cut short, 5 cut off", s)
		}
	})
}

// A handler that ignores its context is not waited for past a quarter of
// the margin after the cut-off: Handle answers at 4.875 s of a 6 s
// invocation, its record reported failed and counted abandoned, and what it
// returns later changes nothing.
func TestDeadlineAbandonsAHandlerThatIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			if m.Body == "job-1" {
				time.Sleep(time.Minute) // ignores ctx
				return nil
			}
			return nil
		}, Config{Concurrency: 1})
		ev := tenRecords()
		ev.Records = ev.Records[:3]
		begin := time.Now()
		resp, err := h.Handle(invocation(t, 6*time.Second), ev)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(begin); took != 4875*time.Millisecond {
			t.Errorf("answered after %v, want 4.875s (cut-off at 4.5s, a quarter of the 1.5s margin more)", took)
		}
		if got, want := ids(resp), []string{"id-1", "id-2"}; !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want %v", got, want)
		}
		time.Sleep(2 * time.Minute) // the abandoned handler returns nil, too late
		if s := h.Stats(); s.Abandoned != 1 || s.Succeeded != 1 || s.CutOff != 1 || s.ItemFailures != 2 {
			t.Errorf("stats %+v: want job-1 abandoned and not counted when it returns, job-2 cut off", s)
		}
	})
}

// A function timeout shorter than twice the margin halves the invocation:
// in 2 s, records still run for 1 s (not 0.5 s: the margin is cut to half).
func TestShortFunctionTimeoutCutsTheMargin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var st starts
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			st.add(m.Body)
			time.Sleep(300 * time.Millisecond)
			return nil
		}, Config{Concurrency: 1})
		resp, err := h.Handle(invocation(t, 2*time.Second), tenRecords())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(resp), []string{"id-4", "id-5", "id-6", "id-7", "id-8", "id-9"}; !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want %v (4 records of 0.3 s start before 1 s)", got, want)
		}
	})
}

// Without a deadline (not on Lambda) nothing is cut off.
func TestNoDeadlineNoCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			time.Sleep(time.Hour)
			return nil
		}, Config{Concurrency: 1})
		resp, err := h.Handle(context.Background(), tenRecords())
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("resp %v, err %v: want every record processed", resp, err)
		}
	})
}

// hanging is a Queue whose give-backs (visibility changes to 0) hang until
// their context ends: an SQS endpoint that stopped answering.
type hanging struct{ Queue }

func (h hanging) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	for _, c := range changes {
		if c.Timeout == 0 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	return h.Queue.ChangeVisibility(ctx, changes)
}

// The lease owner's flush fits in the margin: with give-backs that hang,
// Handle still answers a quarter of the margin before the deadline, for
// a 2 s function (whose margin is cut to 1 s) as for a 10 s one with a
// 300 ms margin; the records cut short and cut off are listed, and their
// give-backs, never answered, counted failed. Were it to answer after
// the deadline, Lambda would retry the whole batch.
func TestFlushEndsBeforeTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		timeout, margin, want time.Duration // want: how long before the deadline Handle answers
	}{
		{2 * time.Second, 0, 250 * time.Millisecond},
		{10 * time.Second, 300 * time.Millisecond, 75 * time.Millisecond},
	} {
		t.Run(fmt.Sprint(tc.timeout), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
				send(t, q, false, "job-0", "job-1", "job-2")
				ev := receiveEvent(t, q, 3, 30*time.Second)
				h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
					<-ctx.Done() // runs until cut short
					return context.Cause(ctx)
				}, Config{Concurrency: 1, DeadlineMargin: tc.margin, OpenQueue: opener(t, hanging{q}, nil)})
				ctx := invocation(t, tc.timeout)
				deadline, _ := ctx.Deadline()
				resp, err := h.Handle(ctx, ev)
				if err != nil {
					t.Fatalf("Handle = %v, want nil: the deadline, not the handlers, failed the records", err)
				}
				early := time.Until(deadline)
				t.Logf("%v function: answered %v before the deadline", tc.timeout, early)
				if early != tc.want {
					t.Errorf("answered %v before the deadline, want %v (a quarter of the margin)", early, tc.want)
				}
				if len(resp.BatchItemFailures) != 3 {
					t.Errorf("batchItemFailures %v, want all 3", resp.BatchItemFailures)
				}
				if st := h.Stats(); st.NackFailed != 3 || st.GivenBack != 0 {
					t.Errorf("stats %+v: want 3 give-backs failed", st)
				}
			})
		})
	}
}
