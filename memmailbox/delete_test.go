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

func TestDeleteFailsPerEntry(t *testing.T) {
	_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
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
	wantErr(t, errs[1], sqsloop.ErrReceiptHandleExpired, "entry 1")
	wantErr(t, errs[2], sqsloop.ErrInvalidArgument, "entry 2", "empty")
	wantErr(t, errs[4], sqsloop.ErrReceiptHandleExpired, "entry 4") // already deleted
	st := wantStats(t, q, 0, 0, 0)
	if st.Deleted != 2 {
		t.Errorf("Deleted = %d, want 2", st.Deleted)
	}
}

func TestBatchSizeIsOneToTen(t *testing.T) {
	_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
	ctx := context.Background()
	for _, n := range []int{0, 11} {
		_, err := q.Delete(ctx, make([]string, n))
		wantErr(t, err, sqsloop.ErrInvalidArgument, "Delete", "1–10")
		_, err = q.ChangeVisibility(ctx, make([]sqsloop.VisibilityChange, n))
		wantErr(t, err, sqsloop.ErrInvalidArgument, "ChangeVisibility", "1–10")
		out := make([]sqsloop.OutgoingMessage, n)
		for i := range out {
			out[i].Body = "x"
		}
		_, err = q.Send(ctx, out)
		wantErr(t, err, sqsloop.ErrInvalidArgument, "Send", "1–10")
	}
	wantStats(t, q, 0, 0, 0)
}

// After the visibility timeout ends, a standard queue still deletes with the
// newest receipt handle (as SQS does), but no longer changes its visibility.
func TestNewestHandleDeletesAfterLapseOnStandardQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
		send(t, q, bodies("a")...)
		m := receive(t, q, 1, 5*time.Second)[0]
		time.Sleep(6 * time.Second)
		err := m.ExtendVisibility(context.Background(), time.Minute)
		wantErr(t, err, sqsloop.ErrReceiptHandleExpired, "not in flight")
		wantStats(t, q, 1, 0, 0)
		if err := m.Ack(context.Background()); err != nil {
			t.Fatalf("Ack after lapse: %v", err)
		}
		wantStats(t, q, 0, 0, 0)
	})
}

// A FIFO queue's receipt handle expires with the visibility timeout.
func TestHandleExpiresWithLeaseOnFIFOQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, "jobs.fifo", memmailbox.QueueConfig{FIFO: true, ContentBasedDeduplication: true})
		send(t, q, sqsloop.OutgoingMessage{Body: "a", MessageGroupID: "g"})
		m := receive(t, q, 1, 5*time.Second)[0]
		time.Sleep(5 * time.Second)
		wantErr(t, m.Ack(context.Background()), sqsloop.ErrReceiptHandleExpired, "expired")
		wantStats(t, q, 1, 0, 0)
	})
}

func TestDeleteEveryState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
		send(t, q, bodies("in flight", "returned")...)
		msgs := receive(t, q, 2, time.Hour)
		if err := msgs[1].Nack(context.Background(), 0); err != nil {
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
