package mailboxtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sqsloop/sqsloop"
)

// testStandardQueueKeepsGroupID: a message sent with a MessageGroupID to a
// standard queue (a fair queue's tenant: SQS orders its delivery by it,
// and a consumer's per-group limit reads it) comes back with it; one sent
// without comes back without.
func testStandardQueueKeepsGroupID(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	ids := SendAll(ctx, t, q.Mailbox, sqsloop.OutgoingMessage{Body: "tenant", MessageGroupID: "tenant-a"}, sqsloop.OutgoingMessage{Body: "none"})
	want := map[string]string{ids[0]: "tenant-a", ids[1]: ""}
	msgs := ReceiveN(ctx, t, q.Mailbox, 2, settle, longLease)
	for _, m := range msgs {
		switch {
		case m.MessageGroupID == want[m.ID]:
		case !h.Features().StandardGroupID && m.MessageGroupID == "":
			declared(t, h, DiffStandardQueueDropsGroupID, "a standard queue's message sent with MessageGroupID %q came back without it", want[m.ID])
		default:
			t.Errorf("%s: MessageGroupID %q, want %q", m.Body, m.MessageGroupID, want[m.ID])
		}
	}
	AckAll(ctx, t, q.Mailbox, msgs...)
}

// testReceiveSkipsGroups: a mailbox that can skip message groups
// (sqsloop.GroupSkipper) takes none of the skipped groups' messages, its
// long poll answering empty after its wait when only they are visible; a
// plain Receive then takes them. Too many groups, or an empty one, is an
// invalid argument.
func testReceiveSkipsGroups(t *testing.T, h Harness) {
	ctx := t.Context()
	var opts QueueOptions
	if h.Features().DLQ {
		opts.MaxReceiveCount = 5 // a receive that may dead-letter: its own query
	}
	q, cleanup := h.NewQueue(ctx, t, opts)
	defer cleanup()
	gs, ok := q.Mailbox.(sqsloop.GroupSkipper)
	if !ok {
		t.Skipf("%s is no sqsloop.GroupSkipper", h.Name())
	}
	ids := SendAll(ctx, t, q.Mailbox,
		sqsloop.OutgoingMessage{Body: "a1", MessageGroupID: "busy"}, sqsloop.OutgoingMessage{Body: "b1", MessageGroupID: "quiet"},
		sqsloop.OutgoingMessage{Body: "a2", MessageGroupID: "busy"}, sqsloop.OutgoingMessage{Body: "none"})
	req := sqsloop.ReceiveRequest{MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: longLease, WaitTime: settle}
	var got []*sqsloop.Message
	for range maxPolls(settle) {
		msgs, err := gs.ReceiveSkipping(ctx, req, []string{"busy"})
		if err != nil {
			t.Fatalf("ReceiveSkipping: %v", err)
		}
		if len(msgs) == 0 {
			break
		}
		got = append(got, msgs...)
	}
	bodies := map[string]bool{}
	for _, m := range got {
		bodies[m.Body] = true
	}
	if len(got) != 2 || !bodies["b1"] || !bodies["none"] {
		t.Errorf("ReceiveSkipping(busy) took %s, want b1 and none", describe(got))
	}
	AckAll(ctx, t, q.Mailbox, got...)
	rest := ReceiveN(ctx, t, q.Mailbox, 2, settle, longLease)
	for _, m := range rest {
		if m.MessageGroupID != "busy" || (m.ID != ids[0] && m.ID != ids[2]) {
			t.Errorf("Receive after the skip took %s, want busy's a1 and a2", describe(rest))
		}
	}
	AckAll(ctx, t, q.Mailbox, rest...)
	for _, skip := range [][]string{make([]string, sqsloop.MaxSkipGroups+1), {""}} {
		for i := range skip {
			skip[i] = fmt.Sprint("g", i)
		}
		if len(skip) == 1 {
			skip[0] = ""
		}
		if _, err := gs.ReceiveSkipping(ctx, req, skip); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("ReceiveSkipping with %d groups (%q first): %v, want ErrInvalidArgument", len(skip), skip[0], err)
		}
	}
}
