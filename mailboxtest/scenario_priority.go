package mailboxtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
)

// prioritized returns an outgoing message with body and, unless p is nil,
// the priority attribute *p (sqsloop.PriorityValue).
func prioritized(body string, p *int, group string) sqsloop.OutgoingMessage {
	m := sqsloop.OutgoingMessage{Body: body, MessageGroupID: group}
	if group != "" {
		m.DeduplicationID = body
	}
	if p != nil {
		m.MessageAttributes = map[string]sqsloop.MessageAttribute{sqsloop.PriorityAttribute: sqsloop.PriorityValue(*p)}
	}
	return m
}

// bodies lists the bodies of msgs, in order.
func bodies(msgs []*sqsloop.Message) string {
	b := make([]string, len(msgs))
	for i, m := range msgs {
		b[i] = m.Body
	}
	return strings.Join(b, " ")
}

// testPriorityOrdersReceives: on a queue with priorities a message of a
// higher priority (sqsloop.PriorityAttribute, higher first, 0 without it)
// is received before those of lower ones, whatever the order sent, and
// messages of one priority in the order sent; a message nacked goes back to
// its priority's place; the attribute arrives as sent; and a send whose
// priority is not a whole number from -9 to 9 fails its entry.
func testPriorityOrdersReceives(t *testing.T, h Harness) {
	ctx := t.Context()
	if !h.Features().Priority {
		t.Skipf("%s: Features.Priority is false", h.Name())
	}
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{Priority: true})
	defer cleanup()

	p := func(n int) *int { return &n }
	SendAll(ctx, t, q.Mailbox,
		prioritized("low-a", p(-3), ""), prioritized("none-a", nil, ""), prioritized("high-a", p(5), ""),
		prioritized("top", p(9), ""), prioritized("zero-b", p(0), ""), prioritized("high-b", p(5), ""),
		prioritized("low-b", p(-3), ""))
	const want = "top high-a high-b none-a zero-b low-a low-b"
	got := ReceiveN(ctx, t, q.Mailbox, 7, patience, longLease)
	if bodies(got) != want {
		t.Fatalf("received %s, want %s (higher priority first, then the order sent)", bodies(got), want)
	}
	for _, m := range got {
		if a, ok := m.MessageAttributes[sqsloop.PriorityAttribute]; m.Body == "top" && (!ok || a.StringValue != "9" || a.DataType != "Number") {
			t.Errorf("message %q: attribute %s = %+v, want the Number 9 as sent", m.Body, sqsloop.PriorityAttribute, a)
		}
	}

	// A nacked message goes back to its place: after a newer message of a
	// higher priority, before one of a lower.
	var lowA, noneA *sqsloop.Message
	for _, m := range got {
		switch m.Body {
		case "low-a":
			lowA = m
		case "none-a":
			noneA = m
		}
	}
	for _, m := range []*sqsloop.Message{lowA, noneA} {
		if err := change(ctx, q.Mailbox, m, 0); err != nil {
			t.Fatalf("nack %q: %v", m.Body, err)
		}
	}
	SendAll(ctx, t, q.Mailbox, prioritized("high-c", p(1), ""), prioritized("low-c", p(-9), ""))

	// The counts take in every priority: visible none-a (0), low-a (-3),
	// high-c (1) and low-c (-9); in flight top (9), high-a and high-b (5),
	// zero-b (0) and low-b (-3).
	if ar, ok := q.Mailbox.(sqsloop.AttributesReader); ok && h.Features().AttributesReader {
		a, err := ar.QueueAttributes(ctx)
		if err != nil {
			t.Fatalf("QueueAttributes: %v", err)
		}
		if got := [3]int{a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed}; got != [3]int{4, 5, 0} {
			t.Errorf("counts (visible, in flight, delayed) of a queue with priorities -9 to 9 = %v, want [4 5 0]", got)
		}
	}
	again := ReceiveN(ctx, t, q.Mailbox, 4, patience, longLease)
	if b := bodies(again); b != "high-c none-a low-a low-c" {
		t.Fatalf("after nacking low-a and none-a and sending high-c and low-c: received %s, want high-c none-a low-a low-c", b)
	}

	// A priority out of range or not a whole number fails its entry; the
	// others of the batch are sent.
	bad := func(dataType, value string) sqsloop.OutgoingMessage {
		return sqsloop.OutgoingMessage{Body: "bad", MessageAttributes: map[string]sqsloop.MessageAttribute{
			sqsloop.PriorityAttribute: {DataType: dataType, StringValue: value}}}
	}
	res, err := q.Mailbox.Send(ctx, []sqsloop.OutgoingMessage{bad("Number", "10"), bad("Number", "1.5"), bad("String", "1"),
		prioritized("fine", p(-9), "")})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	for i, r := range res[:3] {
		if !errors.Is(r.Err, sqsloop.ErrInvalidArgument) || !strings.Contains(r.Err.Error(), sqsloop.PriorityAttribute) {
			t.Errorf("Send entry %d: %v, want an error wrapping ErrInvalidArgument that names %s", i, r.Err, sqsloop.PriorityAttribute)
		}
	}
	if res[3].Err != nil {
		t.Errorf("Send entry 3 (priority -9): %v, want it sent", res[3].Err)
	}
}

// testPriorityOrdersFIFOGroups: on a FIFO queue with priorities the message
// groups are taken in the order of their next message's priority (higher
// first, then the oldest group), and the messages within a group in the
// order sent, whatever their own priorities.
func testPriorityOrdersFIFOGroups(t *testing.T, h Harness) {
	ctx := t.Context()
	f := h.Features()
	if !f.Priority || !f.FIFO || !f.FIFOBatchesWithinGroup {
		t.Skipf("%s: Features.Priority, FIFO or FIFOBatchesWithinGroup is false", h.Name())
	}
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{FIFO: true, Priority: true})
	defer cleanup()

	p := func(n int) *int { return &n }
	// Group A's head has priority 0 and its second 9; B's head 5; C's -1.
	SendAll(ctx, t, q.Mailbox,
		prioritized("a1", nil, "A"), prioritized("c1", p(-1), "C"), prioritized("a2", p(9), "A"),
		prioritized("b1", p(5), "B"), prioritized("c2", p(9), "C"), prioritized("b2", p(0), "B"))
	// Two at a time: the group of the highest head, all of it in order,
	// then the next.
	for _, want := range []string{"b1 b2", "a1 a2", "c1 c2"} {
		got := ReceiveN(ctx, t, q.Mailbox, 2, patience, longLease)
		if bodies(got) != want {
			t.Fatalf("received %s, want %s (groups by their next message's priority, each in the order sent)", bodies(got), want)
		}
		// The group stays in flight: the next receive takes the next group.
	}
}
