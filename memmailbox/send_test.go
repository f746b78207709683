package memmailbox_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestSendRejectsBadMessagesPerEntry(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	str := func(v string) sqsloop.MessageAttribute {
		return sqsloop.MessageAttribute{DataType: "String", StringValue: v}
	}
	tooMany := map[string]sqsloop.MessageAttribute{}
	for i := range 11 {
		tooMany[string(rune('a'+i))] = str("v")
	}
	for _, tc := range []struct {
		name  string
		msg   sqsloop.OutgoingMessage
		words []string
	}{
		{"empty body", sqsloop.OutgoingMessage{}, []string{"Body", "empty"}},
		{"body too big", sqsloop.OutgoingMessage{Body: strings.Repeat("x", 1<<20+1)}, []string{"got 1048577", "at most 1048576 bytes"}},
		{"attributes push it over", sqsloop.OutgoingMessage{Body: strings.Repeat("x", 1<<20-10), MessageAttributes: map[string]sqsloop.MessageAttribute{
			"k": {DataType: "String", StringValue: "12345"}, // 1 + 6 + 5 = 12 bytes
		}}, []string{"got 1048578", "at most 1048576 bytes"}},
		{"control character", sqsloop.OutgoingMessage{Body: "a\x00b"}, []string{"Body", "byte 1"}},
		{"invalid UTF-8", sqsloop.OutgoingMessage{Body: "a\xffb"}, []string{"Body", "byte 1"}},
		{"delay too long", sqsloop.OutgoingMessage{Body: "x", Delay: 16 * 60e9}, []string{"Delay", "between 0 and 15m"}},
		{"negative delay", sqsloop.OutgoingMessage{Body: "x", Delay: -1}, []string{"Delay", "between 0 and 15m"}},
		{"bad group on standard", sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "g h"}, []string{"MessageGroupID", "U+0020"}},
		{"long group on standard", sqsloop.OutgoingMessage{Body: "x", MessageGroupID: strings.Repeat("g", 129)}, []string{"MessageGroupID", "at most 128"}},
		{"dedup on standard", sqsloop.OutgoingMessage{Body: "x", DeduplicationID: "d"}, []string{"DeduplicationID", "FIFO"}},
		{"too many attributes", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: tooMany}, []string{"got 11", "at most 10 attributes"}},
		{"reserved name", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"AWS.trace": str("v")}}, []string{`"AWS.trace"`, "reserved"}},
		{"bad name", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"a b": str("v")}}, []string{`"a b"`}},
		{"double dot", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"a..b": str("v")}}, []string{`"a..b"`, "'.'"}},
		{"empty string", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": str("")}}, []string{"StringValue", "empty"}},
		{"bad type", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "Text", StringValue: "v"}}}, []string{"DataType", "String, Number or Binary"}},
		{"bad number", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "Number", StringValue: "1e"}}}, []string{"decimal"}},
		{"empty binary", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "Binary"}}}, []string{"BinaryValue", "empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := q.Send(context.Background(), []sqsloop.OutgoingMessage{{Body: "ok"}, tc.msg})
			if err != nil {
				t.Fatalf("call failed: %v", err)
			}
			if res[0].Err != nil || res[0].MessageID == "" {
				t.Errorf("good entry: %+v", res[0])
			}
			wantErr(t, res[1].Err, sqsloop.ErrInvalidArgument, append(tc.words, "msgs[1]")...)
		})
	}
}

func TestSendAcceptsWhatSQSAccepts(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	// SQS takes 1 MiB (1,048,576 bytes), body and message attributes together.
	ids := send(t, q, sqsloop.OutgoingMessage{Body: strings.Repeat("x", 1<<20)})
	ids = append(ids, send(t, q, sqsloop.OutgoingMessage{Body: strings.Repeat("x", 1<<20-12), MessageAttributes: map[string]sqsloop.MessageAttribute{
		"k": {DataType: "String", StringValue: "12345"},
	}})...)
	ids = append(ids, send(t, q,
		sqsloop.OutgoingMessage{Body: "tab\tnewline\n\r é 😀 \uFFFD", MessageAttributes: map[string]sqsloop.MessageAttribute{
			"n1":         {DataType: "Number", StringValue: "-1.5e10"},
			"n2":         {DataType: "Number.int", StringValue: "42"},
			"bin":        {DataType: "Binary.gz", BinaryValue: []byte{0}},
			"a.b-c_d":    {DataType: "String", StringValue: "v"},
			"AWSish":     {DataType: "String", StringValue: "v"},
			"Amazonlike": {DataType: "String", StringValue: "v"},
		}},
	)...)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, id := range ids {
		if !uuid.MatchString(id) {
			t.Errorf("message ID %q is not a UUID v4", id)
		}
	}
	if ids[0] == ids[1] || ids[1] == ids[2] {
		t.Error("two messages got one ID")
	}
}

func TestSendBatchOverSizeFailsTheCall(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	// SQS caps a whole SendMessageBatch at 1 MiB too (the sum of its
	// messages), not at 10 times a message.
	half := strings.Repeat("x", 1<<19)
	_, err := q.Send(context.Background(), bodies(half, half, "x"))
	wantErr(t, err, sqsloop.ErrInvalidArgument, "msgs", "got 1048577", "at most 1048576 bytes")
	wantStats(t, q, 0, 0, 0)
	send(t, q, bodies(half, half)...)
}

// A standard queue takes a MessageGroupID, as SQS does for fair queues: it
// orders nothing and holds nothing back (messages of one group are received
// together and in flight together), and the received message reports it.
// SequenceNumber and MessageDeduplicationId stay FIFO-only.
func TestStandardQueueTakesMessageGroupID(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
	send(t, q,
		sqsloop.OutgoingMessage{Body: "a1", MessageGroupID: "tenant-a"},
		sqsloop.OutgoingMessage{Body: "a2", MessageGroupID: "tenant-a"},
		sqsloop.OutgoingMessage{Body: "none"},
	)
	first := receive(t, q, 1, time.Minute)
	rest := receive(t, q, 10, time.Minute) // a1 is in flight; a2 is not held back
	got := append(first, rest...)
	if len(got) != 3 {
		t.Fatalf("received %q, want all three: a group holds nothing back on a standard queue", bodiesOf(got))
	}
	wantStats(t, q, 0, 3, 0)
	for _, m := range got {
		want := "tenant-a"
		if m.Body == "none" {
			want = ""
		}
		if m.MessageGroupID != want {
			t.Errorf("%s: MessageGroupID = %q, want %q", m.Body, m.MessageGroupID, want)
		}
		if v, ok := m.Attributes[sqsloop.AttrMessageGroupID]; v != want || ok != (want != "") {
			t.Errorf("%s: Attributes[%s] = %q (present %v), want %q", m.Body, sqsloop.AttrMessageGroupID, v, ok, want)
		}
		for _, name := range []string{sqsloop.AttrSequenceNumber, sqsloop.AttrMessageDeduplicationID} {
			if v, ok := m.Attributes[name]; ok {
				t.Errorf("%s: Attributes[%s] = %q on a standard queue, want none (SQS: FIFO only)", m.Body, name, v)
			}
		}
	}
}
