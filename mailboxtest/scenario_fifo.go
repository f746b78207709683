package mailboxtest

import (
	"context"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// testFIFOOrderWithinGroup: on a FIFO queue, messages of one group arrive in
// the order sent; while one of a group is in flight no other of that group is
// delivered; nacked messages come back first, so the order holds; a
// duplicate send (same deduplication ID) is not delivered; and Send reports
// each message's sequence number as a receive does.
func testFIFOOrderWithinGroup(t *testing.T, h Harness) {
	ctx := t.Context()
	f := h.Features()
	if !f.FIFO {
		t.Skipf("%s: Features.FIFO is false", h.Name())
	}
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{FIFO: true})
	defer cleanup()

	order := map[string][]string{
		"A": {"a1", "a2", "a3", "a4"},
		"B": {"b1", "b2", "b3"},
	}
	var out []sqsloop.OutgoingMessage
	for i := range 4 { // interleave the groups: a1 b1 a2 b2 ...
		for _, g := range []string{"A", "B"} {
			if i < len(order[g]) {
				out = append(out, sqsloop.OutgoingMessage{Body: order[g][i], MessageGroupID: g, DeduplicationID: order[g][i]})
			}
		}
	}
	// Each send reports the sequence number a receive then reports.
	sent, err := q.Mailbox.Send(ctx, out)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	seqOf := map[string]string{}
	for i, r := range sent {
		if r.Err != nil || r.MessageID == "" || r.SequenceNumber == "" {
			t.Fatalf("Send entry %d (%q) = %+v, want a message ID and a sequence number", i, out[i].Body, r)
		}
		seqOf[out[i].Body] = r.SequenceNumber
	}
	SendAll(ctx, t, q.Mailbox, sqsloop.OutgoingMessage{Body: "a1", MessageGroupID: "A", DeduplicationID: "a1"}) // a duplicate
	total := len(order["A"]) + len(order["B"])

	batched := false
	check := func(msgs []*sqsloop.Message, next map[string]int) {
		t.Helper()
		perGroup := map[string]int{}
		for _, m := range msgs {
			g := m.MessageGroupID
			seq, ok := order[g]
			if !ok {
				t.Fatalf("message %q has MessageGroupID %q, want A or B", m.Body, g)
			}
			// The consumer tells a FIFO message by its sequence number.
			if m.Attributes[sqsloop.AttrMessageGroupID] != g || m.Attributes[sqsloop.AttrSequenceNumber] == "" ||
				m.Attributes[sqsloop.AttrMessageDeduplicationID] != m.Body {
				t.Errorf("message %q: system attributes %v, want MessageGroupId %s, a SequenceNumber and MessageDeduplicationId %s", m.Body, m.Attributes, g, m.Body)
			}
			if got := m.Attributes[sqsloop.AttrSequenceNumber]; got != seqOf[m.Body] {
				t.Errorf("message %q: SequenceNumber %q, want %q, as its Send reported", m.Body, got, seqOf[m.Body])
			}
			if next[g] >= len(seq) || m.Body != seq[next[g]] {
				t.Fatalf("group %s: received %q, want %q next (order within a group must hold): %s", g, m.Body, seq[min(next[g], len(seq)-1)], describe(msgs))
			}
			next[g]++
			perGroup[g]++
			if perGroup[g] > 1 {
				batched = true
			}
		}
	}

	// The first receive gets each group's head; the groups are then locked.
	first := receiveSome(ctx, t, q.Mailbox, patience, longLease)
	check(first, map[string]int{})
	locked := map[string]bool{}
	for _, m := range first {
		locked[m.MessageGroupID] = true
	}
	more, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: longLease, WaitTime: settle})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	for _, m := range more {
		if locked[m.MessageGroupID] {
			t.Fatalf("received %q while an earlier message of group %s was in flight", m.Body, m.MessageGroupID)
		}
	}
	inFlight := append(first, more...)
	check(inFlight, map[string]int{})

	// Nack everything in flight: each group starts again from its head.
	changes := make([]sqsloop.VisibilityChange, len(inFlight))
	for i, m := range inFlight {
		changes[i] = sqsloop.VisibilityChange{ReceiptHandle: m.ReceiptHandle}
	}
	errs, err := q.Mailbox.ChangeVisibility(ctx, changes)
	mustAllOK(t, "ChangeVisibility (nack)", errs, err, len(changes))

	next := map[string]int{}
	delivered := 0
	for range 3 * total {
		if delivered == total {
			break
		}
		msgs := receiveSome(ctx, t, q.Mailbox, patience, longLease)
		check(msgs, next)
		delivered += len(msgs)
		AckAll(ctx, t, q.Mailbox, msgs...)
	}
	if delivered != total {
		t.Fatalf("delivered %d messages, want %d", delivered, total)
	}
	ExpectNone(ctx, t, q.Mailbox, settle) // the duplicate a1 is never delivered

	if !batched {
		if f.FIFOBatchesWithinGroup {
			t.Logf("%s: no receive returned two messages of one group this time (allowed)", h.Name())
		} else {
			declared(t, h, DiffFIFOOnePerGroupReceive, "each receive returned at most one message per message group")
		}
	} else if !f.FIFOBatchesWithinGroup {
		t.Errorf("a receive returned several messages of one group, but Features.FIFOBatchesWithinGroup is false")
	}
}

// receiveSome long-polls mb until at least one message arrives (up to 10),
// hiding them for vis, and fails t when none has within d.
func receiveSome(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, d, vis time.Duration) []*sqsloop.Message {
	t.Helper()
	deadline := time.Now().Add(d)
	for polls := 0; ; polls++ {
		wait := pollWait(deadline)
		if wait <= 0 || polls > maxPolls(d) {
			t.Fatalf("no message within %v", d)
		}
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: vis, WaitTime: wait})
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		if len(msgs) > 0 {
			return msgs
		}
	}
}
