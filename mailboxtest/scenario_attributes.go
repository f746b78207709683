package mailboxtest

import (
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// testQueueAttributes: an AttributesReader reports the queue's visibility
// timeout, delay, retention period and maximum message size (the
// defaults), redrive policy and type as the queue was created, and its approximate counts: visible, in flight,
// delayed.
func testQueueAttributes(t *testing.T, h Harness) {
	ctx := t.Context()
	f := h.Features()
	if !f.AttributesReader {
		t.Skipf("%s: Features.AttributesReader is false", h.Name())
	}
	read := func(mb sqsloop.Mailbox) sqsloop.QueueAttributes {
		t.Helper()
		ar, ok := mb.(sqsloop.AttributesReader)
		if !ok {
			t.Fatalf("%T does not implement sqsloop.AttributesReader, but Features.AttributesReader is true", mb)
		}
		a, err := ar.QueueAttributes(ctx)
		if err != nil {
			t.Fatalf("QueueAttributes: %v", err)
		}
		return a
	}
	// settings returns a without its approximate counts.
	settings := func(a sqsloop.QueueAttributes) sqsloop.QueueAttributes {
		a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed = 0, 0, 0
		return a
	}

	opts := QueueOptions{VisibilityTimeout: 7 * time.Second, Delay: 2 * time.Second}
	if f.DLQ {
		opts.MaxReceiveCount = 3
	}
	q, cleanup := h.NewQueue(ctx, t, opts)
	defer cleanup()
	want := sqsloop.QueueAttributes{
		VisibilityTimeout: 7 * time.Second,
		Delay:             2 * time.Second,
		RetentionPeriod:   sqsloop.DefaultRetentionPeriod,
		MaxMessageSize:    sqsloop.MaxMessageSize,
		MaxReceiveCount:   opts.MaxReceiveCount,
		DeadLetterQueue:   q.DeadLetterQueue,
	}
	if got := settings(read(q.Mailbox)); got != want {
		t.Errorf("QueueAttributes = %+v, want %+v", got, want)
	}
	if f.DLQ {
		if q.DeadLetterQueue == "" {
			t.Errorf("NewQueue with a redrive policy returned an empty DeadLetterQueue")
		}
		if got := read(q.DLQ); got.MaxReceiveCount != 0 || got.DeadLetterQueue != "" || got.FIFO {
			t.Errorf("DLQ's QueueAttributes = %+v, want no redrive policy and not FIFO", got)
		}
	}

	// Two messages, delayed 2 s by the queue; one received after its delay.
	SendBodies(ctx, t, q.Mailbox, "counted 1", "counted 2")
	m := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	counts := func(a sqsloop.QueueAttributes) [3]int {
		return [3]int{a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed}
	}
	wantCounts := [3]int{1, 1, 0}
	got := counts(read(q.Mailbox))
	// SQS's counts are eventually consistent: look again for a while.
	for end := time.Now().Add(patience); got != wantCounts && time.Now().Before(end); got = counts(read(q.Mailbox)) {
		if err := h.Sleep(ctx, 500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if got != wantCounts {
		t.Errorf("approximate counts (visible, in flight, delayed) = %v, want %v", got, wantCounts)
	}
	AckAll(ctx, t, q.Mailbox, m)

	if !f.FIFO {
		return
	}
	fq, fcleanup := h.NewQueue(ctx, t, QueueOptions{FIFO: true})
	defer fcleanup()
	want = sqsloop.QueueAttributes{VisibilityTimeout: 30 * time.Second, RetentionPeriod: sqsloop.DefaultRetentionPeriod,
		MaxMessageSize: sqsloop.MaxMessageSize, FIFO: true}
	if got := settings(read(fq.Mailbox)); got != want {
		t.Errorf("FIFO queue's QueueAttributes = %+v, want %+v", got, want)
	}
}
