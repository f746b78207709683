package memmailbox_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

func newFIFO(t testing.TB) *memmailbox.Queue {
	t.Helper()
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs.fifo", FIFO: true, ContentBasedDeduplication: true})
	return q
}

func grouped(group string, bodies ...string) []sqsloop.OutgoingMessage {
	out := make([]sqsloop.OutgoingMessage, len(bodies))
	for i, b := range bodies {
		out[i] = sqsloop.OutgoingMessage{Body: b, MessageGroupID: group}
	}
	return out
}

func TestFIFOGroupInFlightBlocksTheGroup(t *testing.T) {
	q := newFIFO(t)
	send(t, q, grouped("a", "a1", "a2", "a3")...)
	send(t, q, grouped("b", "b1")...)
	first := receive(t, q, 1, time.Minute)
	if got := bodiesOf(first); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("first receive %q, want [a1]", got)
	}
	if got := bodiesOf(receive(t, q, 10, time.Minute)); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("second receive %q, want [b1]: group a has a message in flight", got)
	}
	if got := receive(t, q, 10, time.Minute); len(got) != 0 {
		t.Fatalf("third receive %q, want nothing", bodiesOf(got))
	}
	wantStats(t, q, 2, 2, 0)
	deleteAll(t, q, first)
	if got := bodiesOf(receive(t, q, 10, time.Minute)); !slices.Equal(got, []string{"a2", "a3"}) {
		t.Fatalf("after ack receive %q, want [a2 a3]", got)
	}
}

func TestFIFOReceivesSeveralOfAGroupInOrder(t *testing.T) {
	q := newFIFO(t)
	send(t, q, grouped("a", "a1", "a2")...)
	send(t, q, grouped("b", "b1", "b2")...)
	send(t, q, grouped("a", "a3")...)
	got := receive(t, q, 10, time.Minute)
	if b := bodiesOf(got); !slices.Equal(b, []string{"a1", "a2", "a3", "b1", "b2"}) {
		t.Fatalf("received %q, want each group in order", b)
	}
	var seqs []string
	for _, m := range got {
		if m.Attributes[sqsloop.AttrMessageGroupID] != m.MessageGroupID || m.Attributes[sqsloop.AttrMessageDeduplicationID] == "" {
			t.Errorf("%s: FIFO attributes %v", m.Body, m.Attributes)
		}
		seqs = append(seqs, m.Attributes[sqsloop.AttrSequenceNumber])
	}
	// Sequence numbers grow in send order: a1 a2 b1 b2 a3.
	if s := []string{seqs[0], seqs[1], seqs[3], seqs[4], seqs[2]}; !slices.IsSorted(s) || len(s[0]) != 20 {
		t.Errorf("sequence numbers %q do not grow in send order", seqs)
	}
}

func TestFIFOLapsedGroupComesBackInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newFIFO(t)
		send(t, q, grouped("a", "a1", "a2", "a3")...)
		got := receive(t, q, 2, 5*time.Second)
		if b := bodiesOf(got); !slices.Equal(b, []string{"a1", "a2"}) {
			t.Fatalf("received %q, want [a1 a2]", b)
		}
		// Ack a2, let a1 lapse: the group is blocked until a1 is back.
		deleteAll(t, q, got[1:])
		if got := receive(t, q, 10, time.Minute); len(got) != 0 {
			t.Fatalf("received %q while a1 is in flight", bodiesOf(got))
		}
		time.Sleep(5 * time.Second)
		again := receive(t, q, 10, time.Minute)
		if b := bodiesOf(again); !slices.Equal(b, []string{"a1", "a3"}) || again[0].ReceiveCount != 2 {
			t.Fatalf("received %q, want [a1 a3], a1 for the second time", b)
		}
	})
}

func TestFIFONackUnblocksGroupOnlyWhenNothingElseInFlight(t *testing.T) {
	q := newFIFO(t)
	send(t, q, grouped("a", "a1", "a2")...)
	got := receive(t, q, 10, time.Minute)
	if err := change(q, got[0], 0); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, q, 10, time.Minute); len(r) != 0 {
		t.Fatalf("received %q while a2 is in flight", bodiesOf(r))
	}
	deleteAll(t, q, got[1:])
	if r := bodiesOf(receive(t, q, 10, time.Minute)); !slices.Equal(r, []string{"a1"}) {
		t.Fatalf("received %q, want [a1]", r)
	}
}

func TestFIFODeduplication(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs.fifo", FIFO: true})
		first := send(t, q, sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "g", DeduplicationID: "order-1"})
		time.Sleep(4 * time.Minute)
		dup := send(t, q,
			sqsloop.OutgoingMessage{Body: "y", MessageGroupID: "g", DeduplicationID: "order-1"},
			sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "g", DeduplicationID: "order-2"},
		)
		if dup[0] != first[0] {
			t.Errorf("duplicate got ID %s, want the first message's %s", dup[0], first[0])
		}
		st := wantStats(t, q, 2, 0, 0)
		if st.Sent != 2 || st.Duplicates != 1 {
			t.Errorf("Sent/Duplicates = %d/%d, want 2/1", st.Sent, st.Duplicates)
		}
		time.Sleep(time.Minute) // order-1 is 5 minutes old: forgotten
		send(t, q, sqsloop.OutgoingMessage{Body: "z", MessageGroupID: "g", DeduplicationID: "order-1"})
		wantStats(t, q, 3, 0, 0)
	})
}

func TestFIFOContentBasedDeduplication(t *testing.T) {
	q := newFIFO(t)
	ids := send(t, q, append(grouped("a", "same", "same", "other"), grouped("b", "same")...)...)
	if ids[0] != ids[1] || ids[0] == ids[2] || ids[0] != ids[3] {
		t.Errorf("IDs %q: want equal bodies deduplicated, across groups too", ids)
	}
	wantStats(t, q, 2, 0, 0)
	m := receive(t, q, 10, time.Minute)
	if len(m) != 2 || len(m[0].Attributes[sqsloop.AttrMessageDeduplicationID]) != 64 {
		t.Fatalf("received %+v, want 2 messages with a SHA-256 deduplication ID", m)
	}
}

func TestFIFORejectsBadSends(t *testing.T) {
	_, noCBD := newQueue(t, sqsloop.QueueSpec{Name: "plain.fifo", FIFO: true})
	q := newFIFO(t)
	for _, tc := range []struct {
		q     *memmailbox.Queue
		msg   sqsloop.OutgoingMessage
		words []string
	}{
		{q, sqsloop.OutgoingMessage{Body: "x"}, []string{"MessageGroupID", "must not be empty on a FIFO queue"}},
		{q, sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "g h"}, []string{"MessageGroupID", "U+0020"}},
		{q, sqsloop.OutgoingMessage{Body: "x", MessageGroupID: string(make([]byte, 129))}, []string{"MessageGroupID", "at most 128"}},
		{q, sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "g", Delay: time.Second}, []string{"Delay", "FIFO"}},
		{q, sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "g", DeduplicationID: "é"}, []string{"DeduplicationID"}},
		{noCBD, sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "g"}, []string{"DeduplicationID", "ContentBasedDeduplication"}},
	} {
		res, err := tc.q.Send(context.Background(), []sqsloop.OutgoingMessage{tc.msg})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, res[0].Err, sqsloop.ErrInvalidArgument, append(tc.words, "msgs[0]")...)
		if res[0].MessageID != "" {
			t.Errorf("failed entry has MessageID %q", res[0].MessageID)
		}
	}
	wantStats(t, q, 0, 0, 0)
}

// A receive takes the group whose next message is the oldest, as many of it
// as it can, before another group: SQS "first attempts to return as many
// messages with the same message group ID as possible" (Developer Guide,
// FIFO delivery logic), and sqlmailbox orders its groups so. A group that
// became receivable again does not go behind the groups that waited
// meanwhile when its messages are older.
func TestFIFOReceiveTakesTheOldestGroupFirst(t *testing.T) {
	q := newFIFO(t)
	send(t, q, grouped("a", "a1", "a2", "a3")...)
	send(t, q, grouped("b", "b1")...)
	first := receive(t, q, 1, time.Minute)
	if err := change(q, first[0], 0); err != nil { // a is receivable again, after b
		t.Fatal(err)
	}
	if got := bodiesOf(receive(t, q, 3, time.Minute)); !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("received %q, want group a's three (its messages are the oldest)", got)
	}
}
