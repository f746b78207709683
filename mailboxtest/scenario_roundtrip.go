package mailboxtest

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/sqsloop/sqsloop"
)

// testRoundTripWithAttributes: what is sent is what is received (body,
// message attributes of every data type, the message ID), with the system
// attributes of a first receive; an ack deletes. The mailbox keeps no
// reference to what it was given.
func testRoundTripWithAttributes(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	attrs := map[string]sqsloop.MessageAttribute{
		"trace":   {DataType: "String", StringValue: "abc-123"},
		"attempt": {DataType: "Number", StringValue: "3"},
		"size":    {DataType: "Number.int", StringValue: "42"},
		"blob":    {DataType: "Binary", BinaryValue: []byte{0, 1, 2, 0xfe}},
	}
	want := map[string]sqsloop.MessageAttribute{}
	for k, v := range attrs {
		v.BinaryValue = append([]byte(nil), v.BinaryValue...)
		if len(v.BinaryValue) == 0 {
			v.BinaryValue = nil
		}
		want[k] = v
	}
	const body = "hello, wörld ✓ <&>"
	out := []sqsloop.OutgoingMessage{{Body: body, MessageAttributes: attrs}, {Body: "plain"}}
	res, err := q.Mailbox.Send(ctx, out)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if len(res) != 2 || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("Send results = %+v, want 2 successes", res)
	}
	if res[0].MessageID == "" || res[0].MessageID == res[1].MessageID {
		t.Fatalf("Send message IDs = %q, %q; want two distinct non-empty IDs", res[0].MessageID, res[1].MessageID)
	}
	// The mailbox must not retain what it was given.
	attrs["trace"] = sqsloop.MessageAttribute{DataType: "String", StringValue: "mutated"}
	attrs["blob"].BinaryValue[0] = 0xff
	out[0].Body = "mutated"

	msgs := ReceiveN(ctx, t, q.Mailbox, 2, patience, longLease)
	byID := map[string]*sqsloop.Message{}
	for _, m := range msgs {
		byID[m.ID] = m
	}
	m, ok := byID[res[0].MessageID]
	if !ok {
		t.Fatalf("no received message has the sent ID %s: %s", res[0].MessageID, describe(msgs))
	}
	plain, ok := byID[res[1].MessageID]
	if !ok {
		t.Fatalf("no received message has the sent ID %s: %s", res[1].MessageID, describe(msgs))
	}
	if m.Body != body {
		t.Errorf("Body = %q, want %q", m.Body, body)
	}
	if !reflect.DeepEqual(m.MessageAttributes, want) {
		t.Errorf("MessageAttributes = %+v, want %+v", m.MessageAttributes, want)
	}
	if plain.Body != "plain" || len(plain.MessageAttributes) != 0 {
		t.Errorf("second message = body %q attributes %+v, want body \"plain\" and no attributes", plain.Body, plain.MessageAttributes)
	}
	for _, got := range msgs {
		if got.ReceiveCount != 1 || got.Attributes[sqsloop.AttrApproximateReceiveCount] != strconv.Itoa(1) {
			t.Errorf("message %s: ReceiveCount = %d, attribute %q; want 1 on a first receive",
				got.ID, got.ReceiveCount, got.Attributes[sqsloop.AttrApproximateReceiveCount])
		}
		if got.ReceiptHandle == "" {
			t.Errorf("message %s: empty ReceiptHandle", got.ID)
		}
		if got.SentAt.IsZero() || got.FirstReceivedAt.IsZero() || got.ReceivedAt.IsZero() {
			t.Errorf("message %s: SentAt %v, FirstReceivedAt %v, ReceivedAt %v; want all set",
				got.ID, got.SentAt, got.FirstReceivedAt, got.ReceivedAt)
		}
		if got.VisibilityTimeout != longLease {
			t.Errorf("message %s: VisibilityTimeout = %v, want %v as asked", got.ID, got.VisibilityTimeout, longLease)
		}
		if got.MessageGroupID != "" {
			t.Errorf("message %s: MessageGroupID = %q on a standard queue, want empty", got.ID, got.MessageGroupID)
		}
		for name := range got.Attributes {
			if !slices.Contains(systemAttributes, name) {
				t.Errorf("message %s: system attribute %s, not one of the sqsloop.Attr… names a Mailbox returns", got.ID, name)
			}
		}
		for _, name := range []string{sqsloop.AttrSentTimestamp, sqsloop.AttrApproximateFirstReceiveTimestamp} {
			if got.Attributes[name] == "" {
				t.Errorf("message %s: no system attribute %s", got.ID, name)
			}
		}
	}
	if m.ReceiptHandle == plain.ReceiptHandle {
		t.Errorf("two messages share the receipt handle %q", m.ReceiptHandle)
	}

	// Ack each message on its own.
	for _, got := range msgs {
		if err := ack(ctx, q.Mailbox, got); err != nil {
			t.Fatalf("Ack %s: %v", got.ID, err)
		}
	}
	// The acks deleted: the handles no longer hold the messages, so a nack
	// neither works nor brings them back.
	for _, got := range msgs {
		if err := change(ctx, q.Mailbox, got, 0); !errors.Is(err, sqsloop.ErrReceiptHandleExpired) {
			t.Errorf("Nack %s after its Ack: %v, want ErrReceiptHandleExpired", got.ID, err)
		}
	}
	ExpectNone(ctx, t, q.Mailbox, settle)
}

// systemAttributes are the system attributes a Mailbox may return in
// Message.Attributes: those the sqsloop.Attr… constants name.
var systemAttributes = []string{
	sqsloop.AttrApproximateReceiveCount,
	sqsloop.AttrApproximateFirstReceiveTimestamp,
	sqsloop.AttrSentTimestamp,
	sqsloop.AttrMessageGroupID,
	sqsloop.AttrMessageDeduplicationID,
	sqsloop.AttrSequenceNumber,
	sqsloop.AttrAWSTraceHeader,
}
