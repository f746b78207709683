package mailboxtest

import (
	"reflect"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// testRedriveToDLQ: after maxReceiveCount receives, the next receive moves
// the message to the dead-letter queue instead of delivering it; there it
// arrives with its body and message attributes.
func testRedriveToDLQ(t *testing.T, h Harness) {
	ctx := t.Context()
	if !h.Features().DLQ {
		t.Skipf("%s: Features.DLQ is false", h.Name())
	}
	const maxReceives = 2
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{MaxReceiveCount: maxReceives})
	defer cleanup()
	if q.DLQ == nil {
		t.Fatalf("NewQueue with MaxReceiveCount %d returned no DLQ mailbox", maxReceives)
	}

	attrs := map[string]sqsloop.MessageAttribute{"reason": {DataType: "String", StringValue: "poison"}}
	ids := SendAll(ctx, t, q.Mailbox, sqsloop.OutgoingMessage{Body: "poison pill", MessageAttributes: attrs})
	for n := 1; n <= maxReceives; n++ {
		m := receiveOne(ctx, t, q.Mailbox, patience, longLease)
		if m.ID != ids[0] || m.ReceiveCount != n {
			t.Fatalf("receive %d: got %s, want message %s with ReceiveCount %d", n, describe([]*sqsloop.Message{m}), ids[0], n)
		}
		if err := change(ctx, q.Mailbox, m, 0); err != nil {
			t.Fatalf("Nack: %v", err)
		}
	}
	// Receive number maxReceives+1 moves it instead of delivering it.
	ExpectNone(ctx, t, q.Mailbox, settle)

	d := receiveOne(ctx, t, q.DLQ, patience, longLease)
	if d.Body != "poison pill" || !reflect.DeepEqual(d.MessageAttributes, attrs) {
		t.Errorf("DLQ message = body %q attributes %+v, want the message as sent", d.Body, d.MessageAttributes)
	}
	switch {
	case d.ID != ids[0] && h.Features().RedriveKeepsMessageID:
		t.Errorf("DLQ message ID = %s, want %s kept from the source queue", d.ID, ids[0])
	case d.ID != ids[0]:
		declared(t, h, DiffRedriveNewMessageID, "the DLQ gave the message a new ID %s (was %s)", d.ID, ids[0])
	}
	// The count carries over from the source queue. Whether the receive that
	// moved the message counts is not documented by SQS, and implementations
	// differ (memmailbox: maxReceives+1, fauxqs: maxReceives+2), so only the
	// carrying over is checked.
	if d.ReceiveCount <= maxReceives {
		t.Errorf("ReceiveCount on the DLQ's first receive = %d, want more than the %d receives on the source queue", d.ReceiveCount, maxReceives)
	}
	t.Logf("%s: ReceiveCount on the DLQ's first receive: %d (after %d receives on the source queue)", h.Name(), d.ReceiveCount, maxReceives)
	AckAll(ctx, t, q.DLQ, d)
	ExpectNone(ctx, t, q.DLQ, settle)
}

// testReceiveGoesOnPastDeadLetters: a receive that moves messages to the
// dead-letter queue goes on to the next visible message instead of coming
// back empty (long polling "eliminates false empty responses", SQS's
// Developer Guide): with two messages at maxReceiveCount ahead of a fresh
// one, a 1 s long poll for one message moves both and returns the fresh
// one, at once (within promptly on the wall clock: a mailbox that waited
// before it looked again would take the whole second, or answer empty).
func testReceiveGoesOnPastDeadLetters(t *testing.T, h Harness) {
	ctx := t.Context()
	if !h.Features().DLQ {
		t.Skipf("%s: Features.DLQ is false", h.Name())
	}
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{MaxReceiveCount: 1})
	defer cleanup()

	poison := SendBodies(ctx, t, q.Mailbox, "poison 1", "poison 2")
	received := ReceiveN(ctx, t, q.Mailbox, 2, patience, longLease)
	changes := make([]sqsloop.VisibilityChange, len(received))
	for i, m := range received {
		changes[i] = sqsloop.VisibilityChange{ReceiptHandle: m.ReceiptHandle}
	}
	errs, err := q.Mailbox.ChangeVisibility(ctx, changes) // both visible again, ahead of the next send
	mustAllOK(t, "ChangeVisibility (nack)", errs, err, len(changes))
	fresh := SendBodies(ctx, t, q.Mailbox, "fresh")[0]

	start := time.Now()
	msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: settle})
	elapsed := time.Since(start)
	if err != nil || len(msgs) != 1 || msgs[0].ID != fresh {
		t.Fatalf("1 s long poll for one message behind two at maxReceiveCount: %s, %v; want the fresh message %s", describe(msgs), err, fresh)
	}
	switch {
	case h.Features().VirtualTime && elapsed != 0:
		t.Errorf("the long poll returned the fresh message %v after it began, want at once", elapsed)
	case !h.Features().VirtualTime && elapsed >= promptly:
		t.Errorf("the long poll returned the fresh message %v after it began, want within %v", elapsed.Round(time.Millisecond), promptly)
	case !h.Features().VirtualTime:
		t.Logf("%s: the long poll returned the fresh message %v after it began", h.Name(), elapsed.Round(time.Millisecond))
	}
	AckAll(ctx, t, q.Mailbox, msgs...)
	dead := ReceiveN(ctx, t, q.DLQ, 2, patience, longLease)
	for _, d := range dead {
		if d.Body != "poison 1" && d.Body != "poison 2" {
			t.Errorf("the DLQ holds %s, want the two poison messages %v", describe(dead), poison)
		}
	}
	AckAll(ctx, t, q.DLQ, dead...)
}
