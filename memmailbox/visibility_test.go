package memmailbox_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestExtendCountsFromNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		m := receive(t, q, 1, 10*time.Second)[0]
		time.Sleep(8 * time.Second)
		if err := change(q, m, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10*time.Second - time.Nanosecond) // 18 s after the receive
		wantStats(t, q, 0, 1, 0)
		time.Sleep(time.Nanosecond)
		wantStats(t, q, 1, 0, 0)
	})
}

func TestShortenLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		m := receive(t, q, 1, time.Hour)[0]
		if err := change(q, m, time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		wantStats(t, q, 1, 0, 0)
	})
}

func TestNackRevealsAtOnce(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	send(t, q, bodies("a")...)
	m := receive(t, q, 1, time.Hour)[0]
	if err := change(q, m, 0); err != nil {
		t.Fatal(err)
	}
	st := wantStats(t, q, 1, 0, 0)
	if st.Returned != 1 || st.ExpiredFound != 0 {
		t.Errorf("Returned/ExpiredFound = %d/%d, want 1/0", st.Returned, st.ExpiredFound)
	}
	// Not in flight any more: a second nack fails.
	wantErr(t, change(q, m, 0), sqsloop.ErrReceiptHandleExpired)
	again := receive(t, q, 1, time.Hour)
	if len(again) != 1 || again[0].ReceiveCount != 2 {
		t.Fatalf("after nack received %+v, want the message with count 2", again)
	}
}

func TestNackWithBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		m := receive(t, q, 1, time.Hour)[0]
		if err := change(q, m, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(29 * time.Second)
		wantStats(t, q, 0, 1, 0)
		time.Sleep(time.Second)
		st := wantStats(t, q, 1, 0, 0)
		if st.ExpiredFound != 1 {
			t.Errorf("ExpiredFound = %d, want 1", st.ExpiredFound)
		}
	})
}

func TestTwelveHourCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		m := receive(t, q, 1, time.Hour)[0]
		for range 11 {
			time.Sleep(59 * time.Minute)
			if err := change(q, m, time.Hour); err != nil {
				t.Fatalf("extend at %v: %v", time.Since(m.ReceivedAt), err)
			}
		}
		// 10h49m after the receive: 1h11m more would pass the ceiling.
		err := change(q, m, time.Hour+11*time.Minute+time.Nanosecond)
		wantErr(t, err, sqsloop.ErrLeaseCeiling, "12h")
		if err := change(q, m, time.Hour+11*time.Minute); err != nil {
			t.Fatalf("extend to exactly 12h: %v", err)
		}
		time.Sleep(time.Hour + 11*time.Minute - time.Nanosecond)
		wantStats(t, q, 0, 1, 0)
		time.Sleep(time.Nanosecond)
		wantStats(t, q, 1, 0, 0)
		// A new receive starts a new 12 hours.
		m2 := receive(t, q, 1, 12*time.Hour)[0]
		time.Sleep(time.Hour)
		if err := change(q, m2, 11*time.Hour); err != nil {
			t.Fatalf("extend after a new receive: %v", err)
		}
	})
}

func TestFailedExtendChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		m := receive(t, q, 1, time.Minute)[0]
		time.Sleep(time.Second)
		wantErr(t, change(q, m, 12*time.Hour), sqsloop.ErrLeaseCeiling)
		time.Sleep(59 * time.Second)
		wantStats(t, q, 1, 0, 0) // the original lease lapsed on time
	})
}

func TestChangeVisibilityFailsPerEntry(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	send(t, q, bodies("a", "b")...)
	msgs := receive(t, q, 2, time.Minute)
	errs, err := q.ChangeVisibility(context.Background(), []sqsloop.VisibilityChange{
		{ReceiptHandle: msgs[0].ReceiptHandle, Timeout: -time.Second},
		{ReceiptHandle: msgs[0].ReceiptHandle, Timeout: 12*time.Hour + time.Second},
		{ReceiptHandle: "", Timeout: time.Second},
		{ReceiptHandle: "unknown", Timeout: time.Second},
		{ReceiptHandle: msgs[1].ReceiptHandle, Timeout: 0},
		{ReceiptHandle: msgs[0].ReceiptHandle, Timeout: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, errs[0], sqsloop.ErrInvalidArgument, "changes[0].Timeout", "between 0 and 12h")
	wantErr(t, errs[1], sqsloop.ErrInvalidArgument, "changes[1].Timeout", "between 0 and 12h")
	wantErr(t, errs[2], sqsloop.ErrInvalidArgument, "changes[2].ReceiptHandle", "empty")
	wantErr(t, errs[3], sqsloop.ErrReceiptHandleExpired, "entry 3")
	if errs[4] != nil || errs[5] != nil {
		t.Errorf("good entries failed: %v, %v", errs[4], errs[5])
	}
	wantStats(t, q, 1, 1, 0)
}
