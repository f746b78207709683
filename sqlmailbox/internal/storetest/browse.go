package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// RunOperator runs the scenarios of the operator's calls (QueueSummaries,
// Browse, CountMessages, MoveMessages, DeleteMessages, MessageHistory) on
// env, each as a parallel subtest.
func RunOperator(t *testing.T, env Env) {
	for name, f := range map[string]func(*testing.T, Env){
		"BrowseDoesNotReceive":  browseDoesNotReceive,
		"BrowseFilters":         browseFilters,
		"MoveMessages":          moveMessages,
		"MoveWakesLongPolls":    moveWakesLongPolls,
		"DeleteMessages":        deleteMessages,
		"QueueSummaries":        queueSummaries,
		"OperatorCallsBadInput": operatorBadInput,
		"MoveFIFOKeepsOrder":    moveFIFO,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env.Run(t, func(t *testing.T) { f(t, env) })
		})
	}
}

// browseAll reads every message of queue matching f, 3 a page.
func browseAll(t *testing.T, st *sqlmailbox.Store, queue string, f sqlmailbox.MessageFilter) []sqlmailbox.StoredMessage {
	t.Helper()
	var all []sqlmailbox.StoredMessage
	var after int64
	for {
		page := ok[[]sqlmailbox.StoredMessage](t)(st.Browse(t.Context(), queue, f, after, 3))
		all = append(all, page...)
		if len(page) < 3 {
			return all
		}
		after = page[len(page)-1].Seq
	}
}

// bodies returns the bodies of msgs, in order.
func bodies(msgs []sqlmailbox.StoredMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Body
	}
	return out
}

// browseDoesNotReceive: Browse reads every message of a queue with a
// redrive policy, visible, in flight and delayed, in the order sent, with
// its state, and changes nothing: receive counts stay, nothing is hidden,
// no message goes to the dead-letter queue however often it is browsed.
func browseDoesNotReceive(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "browsed", MaxReceiveCount: 1}))
	defer mb.Close()
	mailboxtest.SendBodies(ctx, t, mb, "a", "b", "c")
	ok[[]sqsloop.SendResult](t)(mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "later", Delay: time.Minute}}))
	held := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)[0]

	for range 3 {
		got := browseAll(t, st, "browsed", sqlmailbox.MessageFilter{})
		if want := []string{"a", "b", "c", "later"}; !slices.Equal(bodies(got), want) {
			t.Fatalf("Browse: %v, want %v in the order sent", bodies(got), want)
		}
		for _, m := range got {
			wantState, wantCount := "visible", 0
			switch m.Body {
			case held.Body:
				wantState, wantCount = "in flight", 1
			case "later":
				wantState = "delayed"
			}
			if m.State != wantState || m.ReceiveCount != wantCount || m.ID == "" || m.SentAt.IsZero() {
				t.Errorf("%s: state %q, receive count %d, ID %q, sent %v; want %q, %d, an ID and a send time",
					m.Body, m.State, m.ReceiveCount, m.ID, m.SentAt, wantState, wantCount)
			}
		}
	}
	a := ok[sqsloop.QueueAttributes](t)(mb.QueueAttributes(ctx))
	if a.ApproximateMessages != 2 || a.ApproximateMessagesInFlight != 1 {
		t.Errorf("after three browses: %d visible, %d in flight; want 2 and 1 (nothing received)", a.ApproximateMessages, a.ApproximateMessagesInFlight)
	}
	// The queue's maxReceiveCount is 1: a browse counted as a receive
	// would have sent the next receive's messages to the DLQ.
	for _, m := range mailboxtest.ReceiveN(ctx, t, mb, 2, 10*time.Second, time.Minute) {
		if m.ReceiveCount != 1 {
			t.Errorf("%s received after the browses with receive count %d, want 1", m.Body, m.ReceiveCount)
		}
	}
}

// browseFilters: each filter field selects what it says, alone and with
// others; CountMessages counts what Browse lists.
func browseFilters(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "filtered"}))
	defer mb.Close()
	str := func(v string) sqsloop.MessageAttribute {
		return sqsloop.MessageAttribute{DataType: "String", StringValue: v}
	}
	ids := mailboxtest.SendAll(ctx, t, mb,
		sqsloop.OutgoingMessage{Body: `{"order":1,"tier":"gold"}`, MessageAttributes: map[string]sqsloop.MessageAttribute{"tier": str("gold"), "order.id": str("o-1")}},
		sqsloop.OutgoingMessage{Body: `{"order":2,"tier":"silver"}`, MessageAttributes: map[string]sqsloop.MessageAttribute{"tier": str("silver")}, MessageGroupID: "g1"},
		sqsloop.OutgoingMessage{Body: "plain text, gold", MessageAttributes: map[string]sqsloop.MessageAttribute{
			"tier": str("gold"), "n": {DataType: "Number", StringValue: "42"}, "bin": {DataType: "Binary", BinaryValue: []byte("gold")}}},
		sqsloop.OutgoingMessage{Body: "no attributes", MessageGroupID: "g1"},
	)
	if err := sqlharness.Sleep(ctx, 2*time.Second); err != nil { // a second send, later
		t.Fatal(err)
	}
	mailboxtest.SendAll(ctx, t, mb, sqsloop.OutgoingMessage{Body: "late"})
	received := mailboxtest.ReceiveN(ctx, t, mb, 5, 10*time.Second, 0) // visible again at once, each received once
	if len(received) != 5 {
		t.Fatalf("received %d, want 5", len(received))
	}
	again := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, 0)[0] // one received twice
	all := browseAll(t, st, "filtered", sqlmailbox.MessageFilter{})
	sentMid := all[3].SentAt.Add(time.Second)

	for _, tc := range []struct {
		name string
		f    sqlmailbox.MessageFilter
		want []string
	}{
		{"message ID", sqlmailbox.MessageFilter{MessageID: ids[1]}, []string{`{"order":2,"tier":"silver"}`}},
		{"body substring", sqlmailbox.MessageFilter{BodyContains: "gold"}, []string{`{"order":1,"tier":"gold"}`, "plain text, gold"}},
		{"body substring, case", sqlmailbox.MessageFilter{BodyContains: "GOLD"}, nil},
		{"attribute present", sqlmailbox.MessageFilter{Attribute: "tier"}, []string{`{"order":1,"tier":"gold"}`, `{"order":2,"tier":"silver"}`, "plain text, gold"}},
		{"attribute with a dot", sqlmailbox.MessageFilter{Attribute: "order.id", AttributeValue: "o-1"}, []string{`{"order":1,"tier":"gold"}`}},
		{"attribute value", sqlmailbox.MessageFilter{Attribute: "tier", AttributeValue: "gold"}, []string{`{"order":1,"tier":"gold"}`, "plain text, gold"}},
		{"number attribute", sqlmailbox.MessageFilter{Attribute: "n", AttributeValue: "42"}, []string{"plain text, gold"}},
		{"binary attribute has no string value", sqlmailbox.MessageFilter{Attribute: "bin", AttributeValue: "gold"}, nil},
		{"attribute missing", sqlmailbox.MessageFilter{Attribute: "nope"}, nil},
		{"receive count", sqlmailbox.MessageFilter{MinReceiveCount: 2}, []string{again.Body}},
		{"receive count at most", sqlmailbox.MessageFilter{MaxReceiveCount: 1}, without(bodies(all), again.Body)},
		{"group", sqlmailbox.MessageFilter{MessageGroupID: "g1"}, []string{`{"order":2,"tier":"silver"}`, "no attributes"}},
		{"sent after", sqlmailbox.MessageFilter{SentAfter: sentMid}, []string{"late"}},
		{"sent before", sqlmailbox.MessageFilter{SentBefore: sentMid}, bodies(all[:4])},
		{"two fields", sqlmailbox.MessageFilter{Attribute: "tier", AttributeValue: "gold", BodyContains: "order"}, []string{`{"order":1,"tier":"gold"}`}},
	} {
		got := bodies(browseAll(t, st, "filtered", tc.f))
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s: Browse %q, want %q", tc.name, got, tc.want)
		}
		if n := ok[int](t)(st.CountMessages(ctx, "filtered", tc.f)); n != len(tc.want) {
			t.Errorf("%s: CountMessages %d, want %d", tc.name, n, len(tc.want))
		}
	}
	if m := all[0]; m.MessageAttributes["order.id"].StringValue != "o-1" || m.MessageAttributes["tier"].DataType != "String" {
		t.Errorf("attributes as browsed: %+v", m.MessageAttributes)
	}
}

// without returns s without v.
func without(s []string, v string) []string {
	return slices.DeleteFunc(slices.Clone(s), func(x string) bool { return x == v })
}

// moveMessages: MoveMessages moves the messages named, once, whole, to the
// other queue, where they are new (never received, a new Seq, no old
// receipt handle reaches them) but keep their IDs; it leaves one in
// flight; each move is audited, and MessageHistory shows the message's
// way.
func moveMessages(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "src", MaxReceiveCount: 1}))
	defer mb.Close()
	dlq := ok[sqsloop.Mailbox](t)(mb.OpenDeadLetterQueue(ctx))
	defer dlq.Close()
	attrs := map[string]sqsloop.MessageAttribute{"k": {DataType: "String", StringValue: "v"}}
	mailboxtest.SendAll(ctx, t, mb, sqsloop.OutgoingMessage{Body: "m0", MessageAttributes: attrs},
		sqsloop.OutgoingMessage{Body: "m1"}, sqsloop.OutgoingMessage{Body: "m2"}, sqsloop.OutgoingMessage{Body: "m3"})
	first := mailboxtest.ReceiveN(ctx, t, mb, 4, 10*time.Second, 0) // visible again at once, received once
	mailboxtest.ExpectNone(ctx, t, mb, 0)                           // moves the four to the DLQ (maxReceiveCount 1)
	dead := browseAll(t, st, "src-dlq", sqlmailbox.MessageFilter{})
	if len(dead) != 4 {
		t.Fatalf("%d in the DLQ, want 4", len(dead))
	}
	heldInDLQ := mailboxtest.ReceiveN(ctx, t, dlq, 1, 10*time.Second, time.Minute)[0]

	var seqs []int64
	for _, m := range dead {
		seqs = append(seqs, m.Seq)
	}
	moved := ok[[]int64](t)(st.MoveMessages(ctx, "src-dlq", "src", append(seqs, 999999), "redrive by test"))
	var wantMoved []int64
	for _, m := range dead {
		if m.Body != heldInDLQ.Body {
			wantMoved = append(wantMoved, m.Seq)
		}
	}
	if !slices.Equal(moved, wantMoved) {
		t.Errorf("moved %v, want %v (all but the one in flight, not the key that names nothing)", moved, wantMoved)
	}
	if again := ok[[]int64](t)(st.MoveMessages(ctx, "src-dlq", "src", seqs, "again")); len(again) != 0 {
		t.Errorf("moving them again moved %v, want none", again)
	}
	back := browseAll(t, st, "src", sqlmailbox.MessageFilter{})
	if len(back) != 3 {
		t.Fatalf("%d back in src, want 3", len(back))
	}
	for i, m := range back {
		old := dead[slices.IndexFunc(dead, func(d sqlmailbox.StoredMessage) bool { return d.ID == m.ID })]
		if m.Body != old.Body || m.ReceiveCount != 0 || m.State != "visible" || m.Seq <= seqs[len(seqs)-1] {
			t.Errorf("moved %s: body %q, receive count %d, %s, seq %d; want its body, 0, visible and a new seq",
				m.ID, m.Body, m.ReceiveCount, m.State, m.Seq)
		}
		if i > 0 && m.Seq <= back[i-1].Seq {
			t.Errorf("moved messages out of order: %v", bodies(back))
		}
		if m.Body == "m0" && m.MessageAttributes["k"].StringValue != "v" {
			t.Errorf("m0 moved without its attributes: %+v", m.MessageAttributes)
		}
	}
	// The receipt handles of the first receives (in src, before the DLQ)
	// reach nothing now.
	var handles []string
	for _, m := range first {
		handles = append(handles, m.ReceiptHandle)
	}
	if _, err := mb.Delete(ctx, handles); err != nil {
		t.Fatal(err)
	}
	if n := len(browseAll(t, st, "src", sqlmailbox.MessageFilter{})); n != 3 {
		t.Errorf("old receipt handles deleted moved messages: %d left in src, want 3", n)
	}
	for _, m := range mailboxtest.ReceiveN(ctx, t, mb, 3, 10*time.Second, time.Minute) {
		if m.ReceiveCount != 1 {
			t.Errorf("%s received in src with receive count %d, want 1 (not sent straight back to the DLQ)", m.Body, m.ReceiveCount)
		}
	}
	h := ok[[]sqlmailbox.AuditRecord](t)(st.MessageHistory(ctx, back[0].ID, 10))
	var kinds []sqlmailbox.AuditKind
	for _, r := range h {
		kinds = append(kinds, r.Kind)
	}
	if want := []sqlmailbox.AuditKind{sqlmailbox.AuditMoved, sqlmailbox.AuditDeadLettered}; !slices.Equal(kinds, want) || h[0].Reason != "redrive by test" || h[0].Queue != "src-dlq" {
		t.Errorf("history of %s: %+v, want a move from src-dlq with its reason after the dead-lettering", back[0].ID, h)
	}
}

// moveWakesLongPolls: a long poll waiting on the destination returns the
// message moved there at once: exactly then in virtual time, within a
// second on the wall clock (its poll interval is 10 s).
func moveWakesLongPolls(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{PollInterval: 10 * time.Second})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "woken"}))
	defer mb.Close()
	other := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "parked"}))
	defer other.Close()
	mailboxtest.SendBodies(ctx, t, other, "x")
	seq := browseAll(t, st, "parked", sqlmailbox.MessageFilter{})[0].Seq
	got := make(chan []*sqsloop.Message, 1)
	go func() {
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 20 * time.Second, VisibilityTimeout: time.Minute})
		if err != nil {
			t.Error(err)
		}
		got <- msgs
	}()
	const waiting = 500 * time.Millisecond
	if err := sqlharness.Sleep(ctx, waiting); err != nil { // the poll waits
		t.Fatal(err)
	}
	acted := time.Now()
	ok[[]int64](t)(st.MoveMessages(ctx, "parked", "woken", []int64{seq}, "test"))
	msgs := <-got
	late := time.Since(acted)
	if len(msgs) != 1 || msgs[0].Body != "x" {
		t.Fatalf("the long poll got %d messages, want x", len(msgs))
	}
	if (env.VirtualTime && late != 0) || late >= time.Second {
		t.Errorf("the long poll returned %v after the move, want at once: the move did not wake it", late)
	}
}

// deleteMessages: DeleteMessages deletes the messages named but one in
// flight, and audits each.
func deleteMessages(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "pruned"}))
	defer mb.Close()
	mailboxtest.SendBodies(ctx, t, mb, "a", "b", "c")
	all := browseAll(t, st, "pruned", sqlmailbox.MessageFilter{})
	held := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)[0]
	deleted := ok[[]int64](t)(st.DeleteMessages(ctx, "pruned", []int64{all[0].Seq, all[1].Seq, all[2].Seq}, "cleanup by test"))
	if len(deleted) != 2 {
		t.Errorf("deleted %v, want the two not in flight", deleted)
	}
	left := browseAll(t, st, "pruned", sqlmailbox.MessageFilter{})
	if len(left) != 1 || left[0].Body != held.Body {
		t.Errorf("left %v, want the one in flight, %s", bodies(left), held.Body)
	}
	for _, m := range all {
		if m.Body == held.Body {
			continue
		}
		h := ok[[]sqlmailbox.AuditRecord](t)(st.MessageHistory(ctx, m.ID, 10))
		if len(h) != 1 || h[0].Kind != sqlmailbox.AuditDeleted || h[0].Reason != "cleanup by test" {
			t.Errorf("history of deleted %s: %+v, want one deletion with its reason", m.Body, h)
		}
	}
}

// queueSummaries: every queue by name with its counts, oldest message and
// groups in flight.
func queueSummaries(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	fifo := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "b.fifo", FIFO: true, MaxReceiveCount: 3}))
	defer fifo.Close()
	plain := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "a"}))
	defer plain.Close()
	before := time.Now()
	for i, g := range []string{"g1", "g1", "g2", "g3"} {
		ok[[]sqsloop.SendResult](t)(fifo.Send(ctx, []sqsloop.OutgoingMessage{{Body: fmt.Sprint(i), MessageGroupID: g, DeduplicationID: fmt.Sprint(i)}}))
	}
	mailboxtest.ReceiveN(ctx, t, fifo, 2, 10*time.Second, time.Minute) // g1's two (as many of one group as it can)
	mailboxtest.ReceiveN(ctx, t, fifo, 1, 10*time.Second, time.Minute) // g2's
	sum := ok[[]sqlmailbox.QueueSummary](t)(st.QueueSummaries(ctx))
	var names []string
	for _, s := range sum {
		names = append(names, s.Name)
	}
	if want := []string{"a", "b-dlq.fifo", "b.fifo"}; !slices.Equal(names, want) {
		t.Fatalf("queues %v, want %v", names, want)
	}
	b := sum[2]
	if a := b.Attributes; a.ApproximateMessages != 1 || a.ApproximateMessagesInFlight != 3 || !a.FIFO || a.DeadLetterQueue != "b-dlq.fifo" || a.MaxReceiveCount != 3 {
		t.Errorf("b.fifo: %+v, want 1 visible, 3 in flight, FIFO, its redrive policy", a)
	}
	if b.GroupsInFlight != 2 || b.OldestSentAt.Before(before.Add(-time.Second)) || b.OldestSentAt.After(time.Now().Add(time.Second)) {
		t.Errorf("b.fifo: %d groups in flight, oldest sent at %v; want 2, at about %v", b.GroupsInFlight, b.OldestSentAt, before)
	}
	if !sum[0].OldestSentAt.IsZero() || sum[0].Attributes.ApproximateMessages != 0 {
		t.Errorf("empty queue a: %+v, want no oldest message and no messages", sum[0])
	}
}

// operatorBadInput: bad limits, keys and filters fail with
// ErrInvalidArgument naming the field; a missing queue is
// ErrQueueNotFound; queues of two types do not mix.
func operatorBadInput(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "std"}))
	defer mb.Close()
	f := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "f.fifo", FIFO: true}))
	defer f.Close()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"Browse limit 0", second(st.Browse(ctx, "std", sqlmailbox.MessageFilter{}, 0, 0)), sqsloop.ErrInvalidArgument},
		{"Browse limit 1001", second(st.Browse(ctx, "std", sqlmailbox.MessageFilter{}, 0, 1001)), sqsloop.ErrInvalidArgument},
		{"attribute name", second(st.Browse(ctx, "std", sqlmailbox.MessageFilter{Attribute: `x"]'`}, 0, 10)), sqsloop.ErrInvalidArgument},
		{"value without name", second(st.CountMessages(ctx, "std", sqlmailbox.MessageFilter{AttributeValue: "v"})), sqsloop.ErrInvalidArgument},
		{"no keys", second(st.MoveMessages(ctx, "std", "f.fifo", nil, "")), sqsloop.ErrInvalidArgument},
		{"two types", second(st.MoveMessages(ctx, "std", "f.fifo", []int64{1}, "")), sqsloop.ErrInvalidArgument},
		{"one queue", second(st.MoveMessages(ctx, "std", "std", []int64{1}, "")), sqsloop.ErrInvalidArgument},
		{"missing queue", second(st.Browse(ctx, "nope", sqlmailbox.MessageFilter{}, 0, 10)), sqsloop.ErrQueueNotFound},
		{"missing destination", second(st.MoveMessages(ctx, "std", "nope", []int64{1}, "")), sqsloop.ErrQueueNotFound},
		{"history limit", second(st.MessageHistory(ctx, "x", 0)), sqsloop.ErrInvalidArgument},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

// second returns the error of a two-result call.
func second[T any](_ T, err error) error { return err }

// moveFIFO: moved FIFO messages keep their group and come after what the
// destination's group holds, in the order they had.
func moveFIFO(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "q.fifo", FIFO: true, MaxReceiveCount: 3}))
	defer mb.Close()
	dlq := ok[sqsloop.Mailbox](t)(mb.OpenDeadLetterQueue(ctx))
	defer dlq.Close()
	for i, b := range []string{"d1", "d2"} {
		ok[[]sqsloop.SendResult](t)(dlq.Send(ctx, []sqsloop.OutgoingMessage{{Body: b, MessageGroupID: "g", DeduplicationID: fmt.Sprint("d", i)}}))
	}
	ok[[]sqsloop.SendResult](t)(mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "s1", MessageGroupID: "g", DeduplicationID: "s1"}}))
	var seqs []int64
	for _, m := range browseAll(t, st, "q-dlq.fifo", sqlmailbox.MessageFilter{}) {
		seqs = append(seqs, m.Seq)
	}
	ok[[]int64](t)(st.MoveMessages(ctx, "q-dlq.fifo", "q.fifo", seqs, "test"))
	var got []string
	for range 3 {
		m := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)[0]
		if m.MessageGroupID != "g" {
			t.Errorf("%s in group %q, want g", m.Body, m.MessageGroupID)
		}
		got = append(got, m.Body)
		mailboxtest.AckAll(ctx, t, mb, m)
	}
	if want := []string{"s1", "d1", "d2"}; !slices.Equal(got, want) {
		t.Errorf("received %v, want %v", got, want)
	}
}
