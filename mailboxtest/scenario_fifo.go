package mailboxtest

import (
	"context"
	"fmt"
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

// testFIFOReceiveFillsFromOneGroupFirst: a FIFO receive returns as many
// messages of one message group as it can before it takes another group
// (SQS's FIFO delivery logic: it "first attempts to return as many messages
// with the same message group ID as possible"), so that one receive holds
// as few groups as it can and other receivers find the rest free. Three
// groups of three messages, sent interleaved: a receive of 2 gets the first
// two of one group; a receive of 10 then gets the other two groups whole,
// one after the other, each in order.
func testFIFOReceiveFillsFromOneGroupFirst(t *testing.T, h Harness) {
	ctx := t.Context()
	f := h.Features()
	if !f.FIFO {
		t.Skipf("%s: Features.FIFO is false", h.Name())
	}
	if !f.FIFOBatchesWithinGroup {
		declared(t, h, DiffFIFOOnePerGroupReceive, "a FIFO receive returns at most one message per group, so it cannot fill from one group first")
		t.Skipf("%s: Features.FIFOBatchesWithinGroup is false", h.Name())
	}
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{FIFO: true})
	defer cleanup()

	groups := []string{"A", "B", "C"}
	const perGroup = 3
	var out []sqsloop.OutgoingMessage
	for i := 1; i <= perGroup; i++ { // A1 B1 C1 A2 B2 C2 A3 B3 C3
		for _, g := range groups {
			body := fmt.Sprint(g, i)
			out = append(out, sqsloop.OutgoingMessage{Body: body, MessageGroupID: g, DeduplicationID: body})
		}
	}
	SendAll(ctx, t, q.Mailbox, out...)

	left := map[string]int{"A": perGroup, "B": perGroup, "C": perGroup} // visible messages of each group
	// check fails t unless msgs hold each group's next messages in order, one
	// group after another, and every group but the last is taken whole.
	check := func(what string, msgs []*sqsloop.Message) {
		t.Helper()
		done := map[string]bool{}
		for i, m := range msgs {
			g := m.MessageGroupID
			if want := fmt.Sprint(g, perGroup-left[g]+1); m.Body != want {
				t.Fatalf("%s: message %d is %q, want %q next in group %s: %s", what, i, m.Body, want, g, describe(msgs))
			}
			if done[g] {
				t.Fatalf("%s: group %s comes back after another group: %s", what, g, describe(msgs))
			}
			left[g]--
			if i+1 < len(msgs) && msgs[i+1].MessageGroupID != g {
				if left[g] > 0 {
					t.Fatalf("%s: took group %s's next message with %d of group %s still visible: %s", what, msgs[i+1].MessageGroupID, left[g], g, describe(msgs))
				}
				done[g] = true
			}
		}
	}

	first, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 2, VisibilityTimeout: longLease, WaitTime: settle})
	if err != nil || len(first) != 2 {
		t.Fatalf("Receive(MaxMessages 2) of 9 visible messages: %s, %v; want 2", describe(first), err)
	}
	if first[0].MessageGroupID != first[1].MessageGroupID {
		t.Fatalf("Receive(MaxMessages 2) took two groups, %s: want two messages of one group", describe(first))
	}
	check("Receive(MaxMessages 2)", first)
	held := first[0].MessageGroupID
	left[held] = 0 // its last message waits behind the two in flight

	rest, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: longLease, WaitTime: settle})
	if err != nil || len(rest) != 2*perGroup {
		t.Fatalf("Receive(MaxMessages 10) with group %s in flight: %s, %v; want the other two groups' 6 messages", held, describe(rest), err)
	}
	for _, m := range rest {
		if m.MessageGroupID == held {
			t.Fatalf("Receive(MaxMessages 10) gave %q while group %s was in flight", m.Body, held)
		}
	}
	check("Receive(MaxMessages 10)", rest)
	AckAll(ctx, t, q.Mailbox, append(first, rest...)...)
}
