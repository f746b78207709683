package mailboxtest

import (
	"reflect"
	"testing"

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
