package memmailbox_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestReceiveRejectsBadRequest(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	send(t, q, bodies("a")...)
	for _, tc := range []struct {
		req   sqsloop.ReceiveRequest
		words []string
	}{
		{sqsloop.ReceiveRequest{MaxMessages: 0}, []string{"MaxMessages", "between 1 and 10"}},
		{sqsloop.ReceiveRequest{MaxMessages: 11}, []string{"MaxMessages", "between 1 and 10"}},
		{sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: -1}, []string{"VisibilityTimeout", "between 0 and 12h"}},
		{sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: 12*time.Hour + 1}, []string{"VisibilityTimeout", "between 0 and 12h"}},
		{sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: -1}, []string{"WaitTime", "between 0 and 20s"}},
		{sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 21 * time.Second}, []string{"WaitTime", "between 0 and 20s"}},
	} {
		msgs, err := q.Receive(context.Background(), tc.req)
		if msgs != nil {
			t.Errorf("%+v: got messages with the error", tc.req)
		}
		wantErr(t, err, sqsloop.ErrInvalidArgument, tc.words...)
	}
	wantStats(t, q, 1, 0, 0) // nothing taken
}

func TestReceiveFillsEveryField(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		sentAt := time.Now()
		ids := send(t, q, sqsloop.OutgoingMessage{
			Body: "hello",
			MessageAttributes: map[string]sqsloop.MessageAttribute{
				"kind": {DataType: "String", StringValue: "greeting"},
				"blob": {DataType: "Binary", BinaryValue: []byte{1, 2}},
			},
		})
		time.Sleep(3 * time.Second)
		msgs := receive(t, q, 10, 45*time.Second)
		if len(msgs) != 1 {
			t.Fatalf("received %d messages, want 1", len(msgs))
		}
		m := msgs[0]
		now := time.Now()
		if m.ID != ids[0] || m.Body != "hello" || m.ReceiveCount != 1 || m.ReceiptHandle == "" ||
			!m.SentAt.Equal(sentAt) || !m.FirstReceivedAt.Equal(now) || !m.ReceivedAt.Equal(now) ||
			m.VisibilityTimeout != 45*time.Second || m.MessageGroupID != "" {
			t.Errorf("message = %+v", m)
		}
		if a := m.MessageAttributes["kind"]; a.DataType != "String" || a.StringValue != "greeting" {
			t.Errorf("attribute kind = %+v", a)
		}
		if a := m.MessageAttributes["blob"]; a.DataType != "Binary" || !slices.Equal(a.BinaryValue, []byte{1, 2}) {
			t.Errorf("attribute blob = %+v", a)
		}
		wantAttrs := map[string]string{
			sqsloop.AttrApproximateReceiveCount:          "1",
			sqsloop.AttrSentTimestamp:                    strconv.FormatInt(sentAt.UnixMilli(), 10),
			sqsloop.AttrApproximateFirstReceiveTimestamp: strconv.FormatInt(now.UnixMilli(), 10),
		}
		for k, v := range wantAttrs {
			if m.Attributes[k] != v {
				t.Errorf("Attributes[%s] = %q, want %q", k, m.Attributes[k], v)
			}
		}
		// Its receipt handle deletes it through q.
		if err := ack(q, m); err != nil {
			t.Fatalf("Ack: %v", err)
		}
		st := wantStats(t, q, 0, 0, 0)
		if st.Sent != 1 || st.Received != 1 || st.Deleted != 1 {
			t.Errorf("Stats = %+v", st)
		}
	})
}

func TestReceivedMessagesShareNothingWithTheQueue(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	blob := []byte("abc")
	attrs := map[string]sqsloop.MessageAttribute{"blob": {DataType: "Binary", BinaryValue: blob}}
	send(t, q, sqsloop.OutgoingMessage{Body: "x", MessageAttributes: attrs})
	blob[0] = 'X' // the sender's slice
	attrs["new"] = sqsloop.MessageAttribute{DataType: "String", StringValue: "v"}

	m := receive(t, q, 1, 0)[0] // visible again at once
	m.MessageAttributes["blob"].BinaryValue[1] = 'Y'
	m.MessageAttributes["other"] = sqsloop.MessageAttribute{}
	m.Attributes[sqsloop.AttrApproximateReceiveCount] = "99"

	again := receive(t, q, 1, time.Minute)[0]
	if got := string(again.MessageAttributes["blob"].BinaryValue); got != "abc" || len(again.MessageAttributes) != 1 {
		t.Errorf("attributes = %+v, want the ones sent, unchanged", again.MessageAttributes)
	}
	if again.Attributes[sqsloop.AttrApproximateReceiveCount] != "2" || again.ReceiveCount != 2 {
		t.Errorf("receive count = %d, attribute %q; want 2", again.ReceiveCount, again.Attributes[sqsloop.AttrApproximateReceiveCount])
	}
}

func TestReceiveTakesAtMostMaxMessages(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	var out []sqsloop.OutgoingMessage
	for i := range 25 {
		out = append(out, sqsloop.OutgoingMessage{Body: strconv.Itoa(i)})
	}
	send(t, q, out...)
	if got := receive(t, q, 10, time.Minute); len(got) != 10 {
		t.Fatalf("received %d, want 10", len(got))
	}
	if got := receive(t, q, 3, time.Minute); len(got) != 3 {
		t.Fatalf("received %d, want 3", len(got))
	}
	wantStats(t, q, 12, 13, 0)
}

func TestVisibilityTimeoutLapses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		ids := send(t, q, bodies("a")...)
		first := receive(t, q, 1, 10*time.Second)[0]
		time.Sleep(10*time.Second - time.Nanosecond)
		if got := receive(t, q, 1, time.Minute); len(got) != 0 {
			t.Fatalf("received %q while in flight", bodiesOf(got))
		}
		wantStats(t, q, 0, 1, 0)
		time.Sleep(time.Nanosecond)
		st := wantStats(t, q, 1, 0, 0)
		if st.ExpiredFound != 1 || st.Returned != 1 {
			t.Errorf("ExpiredFound/Returned = %d/%d, want 1/1", st.ExpiredFound, st.Returned)
		}
		second := receive(t, q, 1, time.Minute)[0]
		if second.ID != ids[0] || second.ReceiveCount != 2 || second.ReceiptHandle == first.ReceiptHandle ||
			!second.FirstReceivedAt.Equal(first.ReceivedAt) {
			t.Errorf("redelivery = %+v, want the same message, count 2, a new receipt handle, first receive kept", second)
		}
		// The first receipt handle is stale now: it changes nothing, and a
		// delete with it succeeds without deleting (as on SQS).
		if err := change(q, first, time.Minute); err == nil {
			t.Error("ChangeVisibility with a stale receipt handle succeeded")
		}
		errs, err := q.Delete(context.Background(), []string{first.ReceiptHandle})
		if err != nil || errs[0] != nil {
			t.Fatalf("Delete with the stale handle: %v, %v; want success", err, errs)
		}
		wantStats(t, q, 0, 1, 0)
		if err := ack(q, second); err != nil {
			t.Errorf("Ack with the newest receipt handle: %v", err)
		}
	})
}

func TestZeroVisibilityTimeoutRevealsAtOnce(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	send(t, q, bodies("a")...)
	for i := 1; i <= 3; i++ {
		msgs := receive(t, q, 10, 0)
		if len(msgs) != 1 || msgs[0].ReceiveCount != i {
			t.Fatalf("receive %d: %d messages (%+v), want the message with count %d", i, len(msgs), msgs, i)
		}
	}
}

func TestReceiptHandlesAreUnique(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	send(t, q, bodies("a", "b", "c")...)
	seen := map[string]bool{}
	for range 50 {
		for _, m := range receive(t, q, 10, 0) {
			if seen[m.ReceiptHandle] {
				t.Fatalf("receipt handle %q given twice", m.ReceiptHandle)
			}
			seen[m.ReceiptHandle] = true
		}
	}
	if len(seen) != 150 {
		t.Fatalf("%d receipt handles, want 150", len(seen))
	}
}

// ReceiveRequest.MessageAttributeNames selects attributes as SQS does: "All"
// and ".*" name every attribute, "order.*" a prefix; names that match
// nothing leave the message without attributes. (The conformance scenario
// TestReceiveChoosesMessageAttributes covers nil, empty, a prefix and one
// name.)
func TestReceiveMessageAttributeNamesAsSQSReadsThem(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	send(t, q, sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{
		"order.id": {DataType: "String", StringValue: "o-1"},
		"orderly":  {DataType: "String", StringValue: "no"},
		"trace":    {DataType: "String", StringValue: "t-1"},
	}})
	for _, tc := range []struct {
		names []string
		want  []string
	}{
		{[]string{"All"}, []string{"order.id", "orderly", "trace"}},
		{[]string{".*"}, []string{"order.id", "orderly", "trace"}},
		{[]string{"order.*", "trace"}, []string{"order.id", "trace"}},
		{[]string{"nothing", "else.*"}, nil},
	} {
		msgs, err := q.Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: 1, MessageAttributeNames: tc.names})
		if err != nil || len(msgs) != 1 {
			t.Fatalf("Receive(%q) = %d messages, %v", tc.names, len(msgs), err)
		}
		got := slices.Sorted(maps.Keys(msgs[0].MessageAttributes))
		if !slices.Equal(got, tc.want) {
			t.Errorf("MessageAttributeNames %q: got attributes %q, want %q", tc.names, got, tc.want)
		}
	}
}

// A standard queue delivers its visible messages in the order they became
// visible, then in the order sent (sqlmailbox's order too): the messages
// one nack batch made visible come in the order sent, not the batch's, and
// before a message sent after the nack.
func TestReceiveOrdersByWhenVisibleThenSendOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "order"})
		send(t, q, bodies("a", "b", "c")...)
		got := receive(t, q, 3, time.Minute)
		time.Sleep(time.Second)
		errs, err := q.ChangeVisibility(context.Background(), []sqsloop.VisibilityChange{
			{ReceiptHandle: got[2].ReceiptHandle}, {ReceiptHandle: got[0].ReceiptHandle}, {ReceiptHandle: got[1].ReceiptHandle}})
		if err != nil || errs[0] != nil || errs[1] != nil || errs[2] != nil {
			t.Fatalf("nack c, a, b: %v %v", errs, err)
		}
		time.Sleep(time.Second)
		send(t, q, bodies("d")...)
		if got := bodiesOf(receive(t, q, 4, time.Minute)); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
			t.Fatalf("received %q, want [a b c d]", got)
		}
	})
}
