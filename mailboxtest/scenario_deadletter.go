package mailboxtest

import (
	"errors"
	"testing"

	"github.com/sqsloop/sqsloop"
)

// testOpenDeadLetterQueue: a Mailbox that implements
// sqsloop.DeadLetterQueueOpener opens the dead-letter queue its redrive
// policy names (a message sent through it arrives in the harness's DLQ),
// and says sqsloop.ErrNoDeadLetterQueue for a queue without one. A Mailbox
// that does not implement it skips.
func testOpenDeadLetterQueue(t *testing.T, h Harness) {
	ctx := t.Context()
	if !h.Features().DLQ {
		t.Skipf("%s: Features.DLQ is false", h.Name())
	}
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{MaxReceiveCount: 3})
	defer cleanup()
	opener, ok := q.Mailbox.(sqsloop.DeadLetterQueueOpener)
	if !ok {
		t.Skipf("%s: %T is no sqsloop.DeadLetterQueueOpener", h.Name(), q.Mailbox)
	}
	dlq, err := opener.OpenDeadLetterQueue(ctx)
	if err != nil {
		t.Fatalf("OpenDeadLetterQueue: %v", err)
	}
	defer dlq.Close()
	ids := SendBodies(ctx, t, dlq, "sent through the opened DLQ")
	m := receiveOne(ctx, t, q.DLQ, patience, longLease)
	if m.ID != ids[0] {
		t.Errorf("the harness's DLQ gave %s, want the message sent through the opened one (%s)", describe([]*sqsloop.Message{m}), ids[0])
	}
	AckAll(ctx, t, q.DLQ, m)

	plain, pcleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer pcleanup()
	_, err = plain.Mailbox.(sqsloop.DeadLetterQueueOpener).OpenDeadLetterQueue(ctx)
	if !errors.Is(err, sqsloop.ErrNoDeadLetterQueue) {
		t.Errorf("OpenDeadLetterQueue of a queue without a redrive policy = %v, want ErrNoDeadLetterQueue", err)
	}
}
