package mailboxtest

import (
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// testQueueAttributes: an AttributesReader reports the queue's visibility
// timeout, delay, redrive policy and type as the queue was created.
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

	opts := QueueOptions{VisibilityTimeout: 7 * time.Second, Delay: 2 * time.Second}
	if f.DLQ {
		opts.MaxReceiveCount = 3
	}
	q, cleanup := h.NewQueue(ctx, t, opts)
	defer cleanup()
	want := sqsloop.QueueAttributes{
		VisibilityTimeout: 7 * time.Second,
		Delay:             2 * time.Second,
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

	if !f.FIFO {
		return
	}
	fq, fcleanup := h.NewQueue(ctx, t, QueueOptions{FIFO: true})
	defer fcleanup()
	want = sqsloop.QueueAttributes{VisibilityTimeout: 30 * time.Second, FIFO: true}
	if got := settings(read(fq.Mailbox)); got != want {
		t.Errorf("FIFO queue's QueueAttributes = %+v, want %+v", got, want)
	}
}

// settings returns a's settings as the scenario compares them: a mailbox
// that reports the retention period and the largest message size reports
// SQS's defaults for a queue made without them (QueueOptions sets neither),
// one that does not reports 0; both read as 0 here. The counts of a queue
// that holds nothing are 0 on every mailbox.
func settings(a sqsloop.QueueAttributes) sqsloop.QueueAttributes {
	if a.RetentionPeriod == sqsloop.DefaultRetentionPeriod {
		a.RetentionPeriod = 0
	}
	if a.MaxMessageSize == sqsloop.MaxMessageSize {
		a.MaxMessageSize = 0
	}
	return a
}
