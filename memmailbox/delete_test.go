package memmailbox_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

func TestDeletePerEntry(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	send(t, q, bodies("a", "b")...)
	msgs := receive(t, q, 2, time.Minute)
	errs, err := q.Delete(context.Background(), []string{msgs[0].ReceiptHandle, "no-such-handle", "", msgs[1].ReceiptHandle, msgs[0].ReceiptHandle})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 5 {
		t.Fatalf("%d results, want 5", len(errs))
	}
	if errs[0] != nil || errs[3] != nil {
		t.Errorf("good entries failed: %v, %v", errs[0], errs[3])
	}
	wantErr(t, errs[1], sqsloop.ErrReceiptHandleExpired, "entry 1", "not issued")
	wantErr(t, errs[2], sqsloop.ErrInvalidArgument, "receiptHandles[2]", "empty")
	if errs[4] != nil { // already deleted: SQS answers success
		t.Errorf("entry 4 (handle of a message already deleted) = %v, want nil", errs[4])
	}
	st := wantStats(t, q, 0, 0, 0)
	if st.Deleted != 2 || st.StaleDeletes != 1 {
		t.Errorf("Deleted, StaleDeletes = %d, %d; want 2, 1", st.Deleted, st.StaleDeletes)
	}
}

// wantAccounted fails t unless Stats' accounting invariant holds.
func wantAccounted(t testing.TB, q *memmailbox.Queue) memmailbox.Stats {
	t.Helper()
	st := q.Stats()
	if in, out := st.Sent+st.DeadLetteredIn, st.Visible+st.InFlight+st.Delayed+st.Deleted+st.DeadLettered; in != out {
		t.Fatalf("Stats %+v: Sent+DeadLetteredIn = %d, but Visible+InFlight+Delayed+Deleted+DeadLettered = %d", st, in, out)
	}
	return st
}

// On a standard queue, a delete with a receipt handle that no longer holds
// its message (a newer receive superseded it, or the message is gone)
// succeeds and deletes nothing, as on SQS: "If you use an old ReceiptHandle,
// the request will succeed, but the message might not be deleted" (the SDK's
// DeleteMessage doc). Stats counts it in StaleDeletes. A visibility change
// with such a handle still fails.
func TestStaleDeleteOnStandardQueueSucceedsAndDeletesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		ctx := context.Background()
		ids := send(t, q, bodies("a")...)
		first := receive(t, q, 1, 5*time.Second)[0]
		time.Sleep(5 * time.Second)
		second := receive(t, q, 1, 5*time.Second)[0]
		if second.ID != ids[0] || second.ReceiptHandle == first.ReceiptHandle {
			t.Fatalf("redelivery = %+v, want message %s with a new receipt handle", second, ids[0])
		}

		if err := ack(q, first); err != nil {
			t.Fatalf("Ack with the superseded handle: %v, want nil (SQS succeeds)", err)
		}
		st := wantStats(t, q, 0, 1, 0) // still in flight under the newest handle
		if st.Deleted != 0 || st.StaleDeletes != 1 {
			t.Errorf("Deleted, StaleDeletes = %d, %d; want 0, 1", st.Deleted, st.StaleDeletes)
		}
		wantAccounted(t, q)
		wantErr(t, change(q, first, time.Minute), sqsloop.ErrReceiptHandleExpired)
		wantErr(t, change(q, first, 0), sqsloop.ErrReceiptHandleExpired)

		// The message survived: its lease lapses and it is delivered again.
		time.Sleep(5 * time.Second)
		third := receive(t, q, 1, time.Minute)
		if len(third) != 1 || third[0].ID != ids[0] || third[0].ReceiveCount != 3 {
			t.Fatalf("after the stale delete received %+v, want message %s a third time", third, ids[0])
		}
		errs, err := q.Delete(ctx, []string{first.ReceiptHandle, second.ReceiptHandle, third[0].ReceiptHandle})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range errs {
			if e != nil {
				t.Errorf("Delete entry %d: %v, want nil", i, e)
			}
		}
		st = wantStats(t, q, 0, 0, 0)
		if st.Deleted != 1 || st.StaleDeletes != 3 {
			t.Errorf("Deleted, StaleDeletes = %d, %d; want 1, 3", st.Deleted, st.StaleDeletes)
		}
		wantAccounted(t, q)

		// Once deleted, every handle it had deletes nothing, successfully.
		if err := ack(q, third[0]); err != nil {
			t.Errorf("second Ack with the newest handle: %v, want nil", err)
		}
		if st := wantAccounted(t, q); st.Deleted != 1 || st.StaleDeletes != 4 {
			t.Errorf("Deleted, StaleDeletes = %d, %d; want 1, 4", st.Deleted, st.StaleDeletes)
		}
	})
}

// A receipt handle the queue never issued fails its entry with
// ErrReceiptHandleExpired (SQS: ReceiptHandleIsInvalid), on either queue
// type: made up, altered, or issued by another queue.
func TestDeleteWithHandleNotIssuedFails(t *testing.T) {
	b, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	other, err := b.CreateQueue(sqsloop.QueueSpec{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	fifo, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs.fifo", FIFO: true, ContentBasedDeduplication: true})
	if err != nil {
		t.Fatal(err)
	}
	send(t, q, bodies("a")...)
	send(t, other, bodies("b")...)
	send(t, fifo, sqsloop.OutgoingMessage{Body: "c", MessageGroupID: "g"})
	h := receive(t, q, 1, time.Minute)[0].ReceiptHandle
	foreign := receive(t, other, 1, time.Minute)[0].ReceiptHandle
	fifoHandle := receive(t, fifo, 1, time.Minute)[0].ReceiptHandle
	last := h[len(h)-1:]
	altered := h[:len(h)-1] + map[bool]string{true: "1", false: "0"}[last == "0"]
	for _, tc := range []struct {
		q      *memmailbox.Queue
		handle string
	}{
		{q, "no-such-handle"}, {q, altered}, {q, h + "0"}, {q, h[1:]}, {q, foreign}, {q, fifoHandle},
		{fifo, "no-such-handle"}, {fifo, h},
	} {
		errs, err := tc.q.Delete(context.Background(), []string{tc.handle})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, errs[0], sqsloop.ErrReceiptHandleExpired, "not issued")
	}
	for i, q := range []*memmailbox.Queue{q, other, fifo} {
		if st := wantStats(t, q, 0, 1, 0); st.Deleted != 0 || st.StaleDeletes != 0 {
			t.Errorf("queue %d: Deleted, StaleDeletes = %d, %d; want 0, 0", i, st.Deleted, st.StaleDeletes)
		}
	}
}

func TestBatchSizeIsOneToTen(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	ctx := context.Background()
	for _, n := range []int{0, 11} {
		_, err := q.Delete(ctx, make([]string, n))
		wantErr(t, err, sqsloop.ErrInvalidArgument, "Delete", "between 1 and 10")
		_, err = q.ChangeVisibility(ctx, make([]sqsloop.VisibilityChange, n))
		wantErr(t, err, sqsloop.ErrInvalidArgument, "ChangeVisibility", "between 1 and 10")
		out := make([]sqsloop.OutgoingMessage, n)
		for i := range out {
			out[i].Body = "x"
		}
		_, err = q.Send(ctx, out)
		wantErr(t, err, sqsloop.ErrInvalidArgument, "Send", "between 1 and 10")
	}
	wantStats(t, q, 0, 0, 0)
}

// After the visibility timeout ends, a standard queue still deletes with the
// newest receipt handle (as SQS does), but no longer changes its visibility.
func TestNewestHandleDeletesAfterLapseOnStandardQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		m := receive(t, q, 1, 5*time.Second)[0]
		time.Sleep(6 * time.Second)
		err := change(q, m, time.Minute)
		wantErr(t, err, sqsloop.ErrReceiptHandleExpired, "not in flight")
		wantStats(t, q, 1, 0, 0)
		if err := ack(q, m); err != nil {
			t.Fatalf("Ack after lapse: %v", err)
		}
		wantStats(t, q, 0, 0, 0)
	})
}

// A FIFO queue's receipt handle expires with the visibility timeout: a
// delete with it fails ("The receipt handle has expired", AWS knowledge
// center: sqs-receipt-handle-error), whether the message is visible again
// or was received again since. A handle whose message is already deleted
// fails too.
func TestHandleExpiresWithLeaseOnFIFOQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs.fifo", FIFO: true, ContentBasedDeduplication: true})
		send(t, q, sqsloop.OutgoingMessage{Body: "a", MessageGroupID: "g"})
		m := receive(t, q, 1, 5*time.Second)[0]
		time.Sleep(5 * time.Second)
		wantErr(t, ack(q, m), sqsloop.ErrReceiptHandleExpired, "expired")
		wantStats(t, q, 1, 0, 0)
		again := receive(t, q, 1, time.Minute)[0]
		wantErr(t, ack(q, m), sqsloop.ErrReceiptHandleExpired, "expired")
		wantStats(t, q, 0, 1, 0)
		if err := ack(q, again); err != nil {
			t.Fatalf("Ack with the newest handle: %v", err)
		}
		wantErr(t, ack(q, again), sqsloop.ErrReceiptHandleExpired, "expired")
		if st := wantStats(t, q, 0, 0, 0); st.Deleted != 1 || st.StaleDeletes != 0 {
			t.Errorf("Deleted, StaleDeletes = %d, %d; want 1, 0", st.Deleted, st.StaleDeletes)
		}
	})
}

func TestDeleteEveryState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("in flight", "returned")...)
		msgs := receive(t, q, 2, time.Hour)
		if err := change(q, msgs[1], 0); err != nil {
			t.Fatal(err)
		}
		send(t, q, sqsloop.OutgoingMessage{Body: "delayed", Delay: time.Minute})
		wantStats(t, q, 1, 1, 1)
		deleteAll(t, q, msgs) // in flight, and visible again
		wantStats(t, q, 0, 0, 1)
		time.Sleep(time.Minute)
		got := receive(t, q, 10, time.Hour)
		if len(got) != 1 || got[0].Body != "delayed" {
			t.Fatalf("received %q, want [delayed]", bodiesOf(got))
		}
		if strings.Contains(got[0].ReceiptHandle, " ") {
			t.Errorf("receipt handle %q has a space", got[0].ReceiptHandle)
		}
	})
}
