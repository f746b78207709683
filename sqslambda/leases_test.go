package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// watched is a Queue that records the calls made to it and can fail them.
type watched struct {
	Queue
	mu         sync.Mutex
	changes    []time.Time // when each ChangeVisibility call was made
	attrReads  int
	changeErr  error // when set, ChangeVisibility fails with it
	attrErr    error // when set, QueueAttributes fails with it
	deleteCall int
}

func (w *watched) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	w.mu.Lock()
	w.changes = append(w.changes, time.Now())
	err := w.changeErr
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return w.Queue.ChangeVisibility(ctx, changes)
}

func (w *watched) Delete(ctx context.Context, handles []string) ([]error, error) {
	w.mu.Lock()
	w.deleteCall++
	w.mu.Unlock()
	return w.Queue.Delete(ctx, handles)
}

func (w *watched) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	w.mu.Lock()
	w.attrReads++
	err := w.attrErr
	w.mu.Unlock()
	if err != nil {
		return sqsloop.QueueAttributes{}, err
	}
	return w.Queue.QueueAttributes(ctx)
}

func (w *watched) counts() (changes, attrReads, deletes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.changes), w.attrReads, w.deleteCall
}

// A record that beats keeps its message hidden past the queue's 3 s
// visibility timeout for the 10 s it runs: nobody else can receive it
// meanwhile, the lease owner extends it in ChangeMessageVisibility calls,
// and after the invocation the event source mapping's delete with the
// event's receipt handle still deletes it (the lease held throughout).
// Nothing is deleted by the Handler itself.
func TestBeatingRecordStaysHiddenPastTheVisibilityTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		w := &watched{Queue: q}
		send(t, q, false, "long job")
		ev := receiveEvent(t, q, 1, 3*time.Second)
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			for range 20 {
				heartbeat.Beat(ctx)
				time.Sleep(500 * time.Millisecond)
			}
			return nil
		}, Config{OpenQueue: opener(t, w, nil)})
		probeDone := make(chan []string)
		go func() { // another receiver, polling every 500 ms while the record runs
			var got []string
			for range 19 {
				time.Sleep(500 * time.Millisecond)
				got = append(got, visible(t, q)...)
			}
			probeDone <- got
		}()
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("resp %v, err %v: want the record processed", resp, err)
		}
		if got := <-probeDone; len(got) != 0 {
			t.Fatalf("another receiver got %v while the record beat", got)
		}
		st := h.Stats()
		t.Logf("10 s record on a 3 s visibility timeout: %d extensions in %d calls", st.Extensions, st.ExtensionCalls)
		if st.Extensions < 3 || st.LeasesLost != 0 || st.Acked != 1 {
			t.Errorf("stats %+v: want ≥ 3 extensions, no lease lost, one ack", st)
		}
		if _, _, deletes := w.counts(); deletes != 0 {
			t.Errorf("%d deletes by the Handler, want none (the event source mapping deletes)", deletes)
		}
		errs, err := q.Delete(t.Context(), []string{ev.Records[0].ReceiptHandle}) // as the event source mapping does
		if err != nil || errs[0] != nil {
			t.Fatalf("the event source mapping's delete: %v %v", err, errs)
		}
	})
}

// A Visibility that cannot keep a lease on the queue is refused at the
// first invocation, as a consumer refuses it: with MaxExtension 10 s on a
// 30 s queue the first extension would ask only for the time left to that
// ceiling, ending the lease 18 s early, and another receiver would get a
// record whose handler beats for 20 s. The client is off instead (one
// ERROR naming MaxExtension), and the record keeps the receive's 30 s.
func TestVisibilityThatCannotKeepALeaseIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		send(t, q, false, "long job")
		ev := receiveEvent(t, q, 1, 30*time.Second)
		logger, lg := newLogger()
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			for range 40 {
				heartbeat.Beat(ctx)
				time.Sleep(500 * time.Millisecond)
			}
			return nil
		}, Config{OpenQueue: opener(t, q, nil), Logger: logger, Visibility: visibility.Config{MaxExtension: 10 * time.Second}})
		probeDone := make(chan []string)
		go func() { // another receiver, polling every 500 ms while the record runs
			var got []string
			for range 39 {
				time.Sleep(500 * time.Millisecond)
				got = append(got, visible(t, q)...)
			}
			probeDone <- got
		}()
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("resp %v, err %v: want the record processed", resp, err)
		}
		if got := <-probeDone; len(got) != 0 {
			t.Errorf("another receiver got %v while the record beat", got)
		}
		if errs := lg.errors(slog.LevelError); len(errs) != 1 || !contains(errs[0], "MaxExtension:") {
			t.Errorf("errors %q: want one naming MaxExtension", errs)
		}
		if st := h.Stats(); st.LeasesLost != 0 || st.ExtensionCalls != 0 {
			t.Errorf("stats %+v: want no extension and no lease lost", st)
		}
	})
}

// A record that stops beating loses its lease at the visibility timeout;
// with CancelOnLeaseLost its context is cancelled with a cause matching
// visibility.ErrLeaseLost, it is reported failed, and another receiver
// gets the message.
func TestRecordThatStopsBeatingLosesItsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		send(t, q, false, "stuck job")
		ev := receiveEvent(t, q, 1, 3*time.Second)
		var cause error
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			heartbeat.Beat(ctx)
			<-ctx.Done()
			cause = context.Cause(ctx)
			return cause
		}, Config{OpenQueue: opener(t, q, nil), Visibility: visibility.Config{CancelOnLeaseLost: true}})
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if !errors.Is(err, ErrAllFailed) {
			t.Fatalf("Handle = %v, want ErrAllFailed: the one record failed", err)
		}
		if got := ids(resp); !slices.Equal(got, []string{ev.Records[0].MessageId}) {
			t.Errorf("batchItemFailures %v, want the stuck record", got)
		}
		if !errors.Is(cause, visibility.ErrLeaseLost) {
			t.Errorf("cause %v, want ErrLeaseLost", cause)
		}
		if st := h.Stats(); st.LeasesLost != 1 || st.Nacked != 0 {
			t.Errorf("stats %+v: want the lease lost, no nack", st)
		}
		if got := visible(t, q); !slices.Equal(got, []string{"stuck job"}) {
			t.Errorf("visible after the loss: %v, want the stuck job", got)
		}
	})
}

// A handler that never beats loses its lease at the visibility timeout,
// and the Handler counts it among LeasesLostNeverBeat as a consumer does,
// summed over invocations.
func TestLeaseLostNeverBeatIsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		send(t, q, false, "silent 1", "silent 2")
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			time.Sleep(5 * time.Second) // never beats
			return nil
		}, Config{OpenQueue: opener(t, q, nil)})
		for range 2 {
			if _, err := h.Handle(invocation(t, time.Minute), receiveEvent(t, q, 1, 3*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if st := h.Stats(); st.LeasesLost != 2 || st.LeasesLostNeverBeat != 2 || st.LateAcked != 2 {
			t.Errorf("stats %+v: want 2 leases lost, both never beaten, both acks late", st)
		}
	})
}

// A record whose lease lapsed while it waited for its message group's head
// is not run: another receiver may have it already. The head sleeps 5 s
// without beating on a 3 s FIFO queue; its lease and the next record's
// lapse at 3 s; the next record is reported failed and never runs, and
// the rest of its group is skipped to keep the order.
func TestRecordWhoseLeaseLapsedWhileWaitingIsNotRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		send(t, q, true, "slow A1", "ok A2", "ok A3")
		ev := receiveEvent(t, q, 3, 3*time.Second)
		var r runs
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			r.add(m.Body)
			if m.Body == "slow A1" {
				time.Sleep(5 * time.Second) // never beats
			}
			return nil
		}, Config{OpenQueue: opener(t, q, nil)})
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(resp), idsOf(ev, 2, 3); !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want A2 and A3", got)
		}
		if got := r.get(); !slices.Equal(got, []string{"slow A1"}) {
			t.Errorf("ran %v, want A1 only", got)
		}
		if st := h.Stats(); st.CutOff != 1 || st.Skipped != 1 || st.LateAcked != 1 || st.LeasesLost != 3 {
			t.Errorf("stats %+v: want A2 cut off (lapsed), A3 skipped, A1's ack late, 3 leases lost", st)
		}
	})
}

// A record whose handler is still running when Handle stops waiting for it
// is reported failed but stays hidden while that handler may still run (its
// lease is released, not given back): another receiver gets it only when
// the queue's 30 s visibility timeout ends.
func TestAbandonedRecordStaysHidden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		send(t, q, false, "stubborn")
		ev := receiveEvent(t, q, 1, 30*time.Second)
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			time.Sleep(time.Minute) // ignores its context
			return nil
		}, Config{OpenQueue: opener(t, q, nil)})
		begin := time.Now()
		resp, err := h.Handle(invocation(t, 6*time.Second), ev)
		if err != nil {
			t.Fatalf("Handle = %v, want nil: the deadline, not the handler, failed the record", err)
		}
		if got := ids(resp); !slices.Equal(got, idsOf(ev, 1)) {
			t.Errorf("batchItemFailures %v, want the abandoned record", got)
		}
		if got := visible(t, q); len(got) != 0 {
			t.Errorf("visible right after the invocation: %v, want nothing while its handler may run", got)
		}
		time.Sleep(begin.Add(30 * time.Second).Sub(time.Now()))
		if got := visible(t, q); !slices.Equal(got, []string{"stubborn"}) {
			t.Errorf("visible after the visibility timeout: %v, want the abandoned record", got)
		}
		if st := h.Stats(); st.Abandoned != 1 || st.GivenBack != 0 {
			t.Errorf("stats %+v: want one abandoned, nothing given back", st)
		}
		time.Sleep(time.Minute) // the abandoned handler returns
	})
}

// A failed record comes back after its back-off (5 s here), not at once
// and not after the queue's 30 s visibility timeout; without a client it
// comes back after the visibility timeout.
func TestFailedRecordComesBackAfterItsBackoff(t *testing.T) {
	for _, withClient := range []bool{true, false} {
		name := map[bool]string{true: "with a client", false: "without a client"}[withClient]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
				send(t, q, false, "fail: always")
				ev := receiveEvent(t, q, 1, 30*time.Second)
				cfg := Config{Backoff: func(int) time.Duration { return 5 * time.Second }}
				if withClient {
					cfg.OpenQueue = opener(t, q, nil)
				}
				h := mustNew(t, byBody(nil), cfg)
				begin := time.Now()
				if _, err := h.Handle(invocation(t, time.Minute), ev); !errors.Is(err, ErrAllFailed) {
					t.Fatalf("Handle = %v, want ErrAllFailed: the one record failed", err)
				}
				back := time.Duration(0)
				for back = time.Second; back <= time.Minute; back += time.Second {
					time.Sleep(begin.Add(back).Sub(time.Now()))
					if len(visible(t, q)) > 0 {
						break
					}
				}
				want := map[bool]time.Duration{true: 5 * time.Second, false: 30 * time.Second}[withClient]
				t.Logf("%s: the failed record is visible again %v after the invocation", name, back)
				if back != want {
					t.Errorf("visible again after %v, want %v", back, want)
				}
				if st := h.Stats(); withClient && st.Nacked != 1 {
					t.Errorf("stats %+v: want one nack", st)
				}
			})
		})
	}
}

// Records cut off by the deadline, and one cut short, are given back at
// once with a client: visible right after the invocation, not after the
// queue's 30 s visibility timeout. Records of 1 s, one at a time, in a 5 s
// invocation (cut-off at 3.5 s): job-0 … job-2 run, job-3 is cut short,
// job-4 and job-5 never start.
func TestCutOffRecordsAreGivenBackAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		send(t, q, false, "job-0", "job-1", "job-2", "job-3", "job-4", "job-5")
		ev := receiveEvent(t, q, 6, 30*time.Second)
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			select {
			case <-time.After(time.Second):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}, Config{Concurrency: 1, OpenQueue: opener(t, q, nil)})
		resp, err := h.Handle(invocation(t, 5*time.Second), ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.BatchItemFailures) != 3 {
			t.Fatalf("batchItemFailures %v, want job-3, job-4, job-5", resp.BatchItemFailures)
		}
		got := visible(t, q)
		slices.Sort(got)
		if !slices.Equal(got, []string{"job-3", "job-4", "job-5"}) {
			t.Errorf("visible right after the invocation: %v, want job-3, job-4, job-5", got)
		}
		if st := h.Stats(); st.GivenBack != 3 || st.CutOff != 2 || st.Failed != 1 || st.Nacked != 0 {
			t.Errorf("stats %+v: want 1 cut short and 2 cut off, all 3 given back, no nack", st)
		}
	})
}

// On a FIFO queue the records skipped after a failure are given back, and
// the group comes back in order once the failed record's back-off ends:
// nothing of it before, the failed record first.
func TestFIFOGroupComesBackInOrderAfterTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		send(t, q, true, "ok A1", "fail A2", "ok A3", "ok A4", "ok B1")
		ev := receiveEvent(t, q, 5, 30*time.Second)
		var r runs
		h := mustNew(t, byBody(&r), Config{OpenQueue: opener(t, q, nil), Backoff: func(int) time.Duration { return 10 * time.Second }})
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.BatchItemFailures) != 3 {
			t.Fatalf("batchItemFailures %v, want A2, A3, A4", resp.BatchItemFailures)
		}
		// The event source mapping deletes the processed records.
		for _, rec := range ev.Records {
			if rec.Body == "ok A1" || rec.Body == "ok B1" {
				if _, err := q.Delete(t.Context(), []string{rec.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(9 * time.Second)
		if got := visible(t, q); len(got) != 0 {
			t.Fatalf("group A visible during the back-off: %v", got)
		}
		time.Sleep(2 * time.Second)
		msgs, err := q.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range msgs {
			got = append(got, m.Body)
		}
		if !slices.Equal(got, []string{"fail A2", "ok A3", "ok A4"}) {
			t.Errorf("after the back-off: %v, want A2, A3, A4 in order", got)
		}
	})
}

// Nothing of the lease owner runs between invocations: it makes no call
// once Handle has returned, even an hour later, and every goroutine it
// started has ended.
func TestNothingRunsBetweenInvocations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		w := &watched{Queue: q}
		send(t, q, false, "ok 1", "fail 2", "ok 3")
		ev := receiveEvent(t, q, 3, 3*time.Second)
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			for range 6 {
				heartbeat.Beat(ctx)
				time.Sleep(time.Second)
			}
			return byBody(nil)(ctx, m)
		}, Config{OpenQueue: opener(t, w, nil)})
		if _, err := h.Handle(invocation(t, time.Minute), ev); err != nil {
			t.Fatal(err)
		}
		before, _, _ := w.counts()
		time.Sleep(time.Hour)
		if after, _, _ := w.counts(); after != before || before == 0 {
			t.Errorf("%d visibility changes during the invocation, %d after an hour: want some, then none", before, after)
		}
	})
	// The same in real time: no goroutine of the Handler outlives Handle.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 3 * time.Second})
	send(t, q, false, "ok 1", "fail 2")
	ev := receiveEvent(t, q, 2, 3*time.Second)
	h := mustNew(t, byBody(nil), Config{OpenQueue: opener(t, q, nil)})
	if _, err := h.Handle(invocation(t, time.Minute), ev); err != nil {
		t.Fatal(err)
	}
}

// The queue is checked once per cold start, against AWS's guidance: a
// visibility timeout of 10 s is less than 6× a 5 s function timeout, and
// the queue has no redrive policy; a maxReceiveCount of 3 is below 5. A
// second invocation reads nothing and warns of nothing; a new Handler (a
// new execution environment) checks again.
func TestQueueCheckedOncePerColdStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 10 * time.Second})
		w := &watched{Queue: q}
		send(t, q, false, "ok 1", "ok 2")
		logger, lg := newLogger()
		opens := 0
		h := mustNew(t, byBody(nil), Config{OpenQueue: opener(t, w, &opens), Logger: logger})
		for range 2 {
			if _, err := h.Handle(invocation(t, 5*time.Second), receiveEvent(t, q, 1, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		warns := lg.at(slog.LevelWarn)
		if len(warns) != 2 || !contains(warns[0], "less than 6× the function timeout (5s") || !contains(warns[1], "no redrive policy") {
			t.Errorf("warnings %q: want the visibility timeout's and the redrive policy's, once", warns)
		}
		if _, reads, _ := w.counts(); reads != 1 || opens != 1 {
			t.Errorf("%d attribute reads, %d opens, want 1 each", reads, opens)
		}

		low := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 3})
		send(t, low, false, "ok 3")
		logger, lg = newLogger()
		h = mustNew(t, byBody(nil), Config{OpenQueue: opener(t, low, nil), Logger: logger})
		if _, err := h.Handle(invocation(t, 5*time.Second), receiveEvent(t, low, 1, 30*time.Second)); err != nil {
			t.Fatal(err)
		}
		if warns := lg.at(slog.LevelWarn); len(warns) != 1 || !contains(warns[0], "maxReceiveCount (3) is below 5") {
			t.Errorf("warnings %q: want the low maxReceiveCount's only", warns)
		}
	})
}

// Permission errors are reported, not retried forever: a denied
// GetQueueAttributes turns the client off at the first invocation (one
// ERROR record, no second read); visibility changes denied 5 times in a
// row, across invocations, turn it off too, after which no call is made.
// The records are answered all the same.
func TestAccessDeniedTurnsTheClientOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		denied := &watched{Queue: q, attrErr: sqsloop.ErrAccessDenied}
		logger, lg := newLogger()
		h := mustNew(t, byBody(nil), Config{OpenQueue: opener(t, denied, nil), Logger: logger})
		send(t, q, false, "fail 1", "ok 2", "fail 3", "ok 4")
		for range 2 {
			resp, err := h.Handle(invocation(t, time.Minute), receiveEvent(t, q, 2, 30*time.Second))
			if err != nil || len(resp.BatchItemFailures) != 1 {
				t.Fatalf("resp %v, err %v: want the failing record reported", resp, err)
			}
		}
		if changes, reads, _ := denied.counts(); reads != 1 || changes != 0 || len(lg.at(slog.LevelError)) != 1 {
			t.Errorf("%d reads, %d changes, errors %q: want one read, one ERROR, no change", reads, changes, lg.at(slog.LevelError))
		}

		q2 := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		w := &watched{Queue: q2, changeErr: sqsloop.ErrAccessDenied}
		logger, lg = newLogger()
		h = mustNew(t, byBody(nil), Config{OpenQueue: opener(t, w, nil), Logger: logger})
		var perInvocation []int
		for i := range 4 {
			send(t, q2, false, "fail "+string(rune('a'+i)))
			if _, err := h.Handle(invocation(t, time.Minute), receiveEvent(t, q2, 1, 30*time.Second)); !errors.Is(err, ErrAllFailed) {
				t.Fatalf("Handle = %v, want ErrAllFailed: the one record failed", err)
			}
			n, _, _ := w.counts()
			perInvocation = append(perInvocation, n)
		}
		t.Logf("visibility changes made after each invocation: %v", perInvocation)
		if n := len(perInvocation); perInvocation[n-1] != perInvocation[n-2] || perInvocation[n-1] < visibility.MaxAccessDenied {
			t.Errorf("calls %v: want at least %d, then none", perInvocation, visibility.MaxAccessDenied)
		}
		if errs := lg.at(slog.LevelError); len(errs) != 1 || !contains(errs[0], "denied") {
			t.Errorf("errors %q: want one about the denied visibility changes", errs)
		}
	})
}

// A transient failure to read the queue leaves this invocation without the
// lease owner, and the next one tries again.
func TestTransientCheckFailureIsTriedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		w := &watched{Queue: q, attrErr: errors.New("connection reset")}
		h := mustNew(t, byBody(nil), Config{OpenQueue: opener(t, w, nil)})
		send(t, q, false, "fail 1", "fail 2")
		if _, err := h.Handle(invocation(t, time.Minute), receiveEvent(t, q, 1, 30*time.Second)); !errors.Is(err, ErrAllFailed) {
			t.Fatalf("Handle = %v, want ErrAllFailed: the one record failed", err)
		}
		w.mu.Lock()
		w.attrErr = nil
		w.mu.Unlock()
		if _, err := h.Handle(invocation(t, time.Minute), receiveEvent(t, q, 1, 30*time.Second)); !errors.Is(err, ErrAllFailed) {
			t.Fatalf("Handle = %v, want ErrAllFailed: the one record failed", err)
		}
		if _, reads, _ := w.counts(); reads != 2 {
			t.Errorf("%d reads, want 2", reads)
		}
		if st := h.Stats(); st.Nacked != 1 {
			t.Errorf("stats %+v: want the second invocation's failure nacked, not the first's", st)
		}
	})
}

// An SQS that cannot be reached (a VPC without an SQS endpoint) is not
// paid for at every invocation: after 3 attribute reads failed in a row
// (two WARN records, then one ERROR) the client is off until the next
// cold start, and later invocations make no call before their records run.
func TestUnreachableQueueIsGivenUpAfterThreeChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		w := &watched{Queue: q, attrErr: errors.New("dial tcp: i/o timeout")}
		logger, lg := newLogger()
		h := mustNew(t, byBody(nil), Config{OpenQueue: opener(t, w, nil), Logger: logger})
		for i := range 6 {
			send(t, q, false, fmt.Sprint("ok ", i))
			if _, err := h.Handle(invocation(t, time.Minute), receiveEvent(t, q, 1, 30*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if _, reads, _ := w.counts(); reads != 3 {
			t.Errorf("%d attribute reads in 6 invocations, want 3", reads)
		}
		if warns, errs := lg.at(slog.LevelWarn), lg.at(slog.LevelError); len(warns) != 2 || len(errs) != 1 || !contains(errs[0], "reach SQS") {
			t.Errorf("warnings %q, errors %q: want 2 warnings, then one ERROR about reaching SQS", warns, errs)
		}
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
