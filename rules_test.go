package sqsloop_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// parts splits an errors.Join result into its parts; nil gives none.
func parts(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// wantRule fails t unless err reports exactly the problems named by want (a
// fragment of each problem's text, in order), each wrapping
// ErrInvalidArgument and in the rules' grammar.
func wantRule(t *testing.T, err error, want ...string) {
	t.Helper()
	got := parts(err)
	if len(got) != len(want) {
		t.Fatalf("err = %v: %d problems, want %d %q", err, len(got), len(want), want)
	}
	for i, e := range got {
		if !errors.Is(e, sqsloop.ErrInvalidArgument) {
			t.Errorf("problem %d %q does not wrap ErrInvalidArgument", i, e)
		}
		msg := e.Error()
		if !strings.HasPrefix(msg, "sqsloop: invalid argument: ") || !strings.Contains(msg, ": must ") {
			t.Errorf("problem %d %q: want \"sqsloop: invalid argument: <where>: must …\"", i, msg)
		}
		if !strings.Contains(msg, want[i]) {
			t.Errorf("problem %d %q does not mention %q", i, msg, want[i])
		}
	}
}

func TestWholeSeconds(t *testing.T) {
	const maxDuration = time.Duration(1<<63 - 1)
	cases := []struct{ in, want time.Duration }{
		{0, 0},
		{time.Nanosecond, time.Second},
		{time.Second, time.Second},
		{1200 * time.Millisecond, 2 * time.Second},
		{2*time.Second - time.Nanosecond, 2 * time.Second},
		{sqsloop.MaxWaitTime, sqsloop.MaxWaitTime},
		{sqsloop.MaxVisibilityTimeout, sqsloop.MaxVisibilityTimeout},
		{sqsloop.MaxVisibilityTimeout + time.Nanosecond, sqsloop.MaxVisibilityTimeout + time.Second},
		{-time.Nanosecond, 0},
		{-1500 * time.Millisecond, -time.Second},
		{maxDuration, maxDuration.Truncate(time.Second)},
	}
	for _, c := range cases {
		if got := sqsloop.WholeSeconds(c.in); got != c.want {
			t.Errorf("WholeSeconds(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestReceiveRequestValidate(t *testing.T) {
	ok := sqsloop.ReceiveRequest{MaxMessages: 1}
	with := func(f func(*sqsloop.ReceiveRequest)) sqsloop.ReceiveRequest {
		r := ok
		f(&r)
		return r
	}
	const (
		max  = "ReceiveRequest.MaxMessages: must be between 1 and 10 (SQS MaxNumberOfMessages), got "
		vis  = "ReceiveRequest.VisibilityTimeout: must be between 0 and 12h (SQS VisibilityTimeout 0–43200 s), got "
		wait = "ReceiveRequest.WaitTime: must be between 0 and 20s (SQS WaitTimeSeconds 0–20), got "
	)
	cases := []struct {
		name string
		req  sqsloop.ReceiveRequest
		want []string
	}{
		{"MaxMessages 0", with(func(r *sqsloop.ReceiveRequest) { r.MaxMessages = 0 }), []string{max + "0"}},
		{"MaxMessages 1", with(func(r *sqsloop.ReceiveRequest) { r.MaxMessages = 1 }), nil},
		{"MaxMessages 10", with(func(r *sqsloop.ReceiveRequest) { r.MaxMessages = 10 }), nil},
		{"MaxMessages 11", with(func(r *sqsloop.ReceiveRequest) { r.MaxMessages = 11 }), []string{max + "11"}},
		{"VisibilityTimeout -1ns", with(func(r *sqsloop.ReceiveRequest) { r.VisibilityTimeout = -1 }), []string{vis + "-1ns"}},
		{"VisibilityTimeout 0", with(func(r *sqsloop.ReceiveRequest) { r.VisibilityTimeout = 0 }), nil},
		{"VisibilityTimeout 12h", with(func(r *sqsloop.ReceiveRequest) { r.VisibilityTimeout = 12 * time.Hour }), nil},
		{"VisibilityTimeout 12h+1ns", with(func(r *sqsloop.ReceiveRequest) { r.VisibilityTimeout = 12*time.Hour + 1 }), []string{vis + "12h0m0.000000001s"}},
		{"WaitTime -1ns", with(func(r *sqsloop.ReceiveRequest) { r.WaitTime = -1 }), []string{wait + "-1ns"}},
		{"WaitTime 0", with(func(r *sqsloop.ReceiveRequest) { r.WaitTime = 0 }), nil},
		{"WaitTime 20s", with(func(r *sqsloop.ReceiveRequest) { r.WaitTime = 20 * time.Second }), nil},
		{"WaitTime 20s+1ns", with(func(r *sqsloop.ReceiveRequest) { r.WaitTime = 20*time.Second + 1 }), []string{wait + "20.000000001s"}},
		{"WaitTime 21s", with(func(r *sqsloop.ReceiveRequest) { r.WaitTime = 21 * time.Second }), []string{wait + "21s"}},
		{"MessageAttributeNames none", with(func(r *sqsloop.ReceiveRequest) { r.MessageAttributeNames = []string{} }), nil},
		{"MessageAttributeNames empty name", with(func(r *sqsloop.ReceiveRequest) { r.MessageAttributeNames = []string{"a", ""} }),
			[]string{"ReceiveRequest.MessageAttributeNames[1]: must not be empty"}},
		{"every problem", sqsloop.ReceiveRequest{MaxMessages: 11, VisibilityTimeout: 13 * time.Hour, WaitTime: time.Minute},
			[]string{max + "11", vis + "13h0m0s", wait + "1m0s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantRule(t, c.req.Validate(), c.want...) })
	}
	if got, want := (sqsloop.ReceiveRequest{}).Validate().Error(), "sqsloop: invalid argument: "+max+"0"; got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
}

// Every batch takes 1–10 entries: 0 and 11 fail the call, 1 and 10 pass.
func TestBatchSize(t *testing.T) {
	calls := []struct {
		where string
		check func(n int) error
	}{
		{"Delete: receiptHandles", func(n int) error {
			hs := make([]string, n)
			for i := range hs {
				hs[i] = "h"
			}
			_, err := sqsloop.ValidateDelete(hs)
			return err
		}},
		{"ChangeVisibility: changes", func(n int) error {
			cs := make([]sqsloop.VisibilityChange, n)
			for i := range cs {
				cs[i].ReceiptHandle = "h"
			}
			_, err := sqsloop.ValidateChangeVisibility(cs)
			return err
		}},
		{"Send: msgs", func(n int) error {
			ms := make([]sqsloop.OutgoingMessage, n)
			for i := range ms {
				ms[i].Body = "b"
			}
			_, err := sqsloop.ValidateSend(ms)
			return err
		}},
	}
	for _, c := range calls {
		for _, n := range []int{0, 1, 10, 11} {
			err := c.check(n)
			if n == 1 || n == 10 {
				if err != nil {
					t.Errorf("%s, %d entries: %v, want nil", c.where, n, err)
				}
				continue
			}
			want := "sqsloop: invalid argument: " + c.where + ": must hold between 1 and 10 entries (SQS batch limit), got " + map[int]string{0: "0", 11: "11"}[n]
			if !errors.Is(err, sqsloop.ErrInvalidArgument) || err.Error() != want {
				t.Errorf("%s, %d entries: %v, want %q", c.where, n, err, want)
			}
		}
	}
}

func TestValidateDelete(t *testing.T) {
	entries, err := sqsloop.ValidateDelete([]string{"a", "", "c"})
	if err != nil || len(entries) != 3 {
		t.Fatalf("ValidateDelete = %v, %v; want 3 entry results", entries, err)
	}
	wantRule(t, entries[0])
	wantRule(t, entries[1], "Delete: receiptHandles[1]: must not be empty")
	wantRule(t, entries[2])
}

func TestValidateChangeVisibility(t *testing.T) {
	const timeout = ": must be between 0 and 12h (SQS VisibilityTimeout 0–43200 s), got "
	changes := []sqsloop.VisibilityChange{
		{ReceiptHandle: "h", Timeout: -1},
		{ReceiptHandle: "h", Timeout: 0},
		{ReceiptHandle: "h", Timeout: 12 * time.Hour},
		{ReceiptHandle: "h", Timeout: 12*time.Hour + 1},
		{ReceiptHandle: "", Timeout: time.Second},
		{ReceiptHandle: "", Timeout: 13 * time.Hour},
	}
	entries, err := sqsloop.ValidateChangeVisibility(changes)
	if err != nil || len(entries) != len(changes) {
		t.Fatalf("ValidateChangeVisibility = %v, %v; want %d entry results", entries, err, len(changes))
	}
	want := [][]string{
		{"ChangeVisibility: changes[0].Timeout" + timeout + "-1ns"},
		nil,
		nil,
		{"ChangeVisibility: changes[3].Timeout" + timeout + "12h0m0.000000001s"},
		{"ChangeVisibility: changes[4].ReceiptHandle: must not be empty"},
		{"ChangeVisibility: changes[5].ReceiptHandle: must not be empty", "ChangeVisibility: changes[5].Timeout" + timeout + "13h0m0s"},
	}
	for i := range changes {
		t.Run(changes[i].Timeout.String(), func(t *testing.T) { wantRule(t, entries[i], want[i]...) })
	}
}

func TestValidateSendEntry(t *testing.T) {
	str := func(v string) sqsloop.MessageAttribute {
		return sqsloop.MessageAttribute{DataType: "String", StringValue: v}
	}
	attrs := func(n int) map[string]sqsloop.MessageAttribute {
		m := make(map[string]sqsloop.MessageAttribute, n)
		for i := range n {
			m[string(rune('a'+i))] = str("v")
		}
		return m
	}
	const (
		body  = "Send: msgs[0].Body: must "
		attr  = "Send: msgs[0].MessageAttributes"
		delay = "Send: msgs[0].Delay: must be between 0 and 15m (SQS DelaySeconds 0–900), got "
		group = "Send: msgs[0].MessageGroupID: must "
		dedup = "Send: msgs[0].DeduplicationID: must "
	)
	max := sqsloop.MaxMessageSize
	cases := []struct {
		name string
		m    sqsloop.OutgoingMessage
		want []string
	}{
		{"minimal", sqsloop.OutgoingMessage{Body: "x"}, nil},
		{"empty body", sqsloop.OutgoingMessage{}, []string{body + "not be empty"}},
		{"tab newline return", sqsloop.OutgoingMessage{Body: "a\tb\nc\rd é 😀"}, nil},
		{"NUL in body", sqsloop.OutgoingMessage{Body: "ab\x00"}, []string{body + "hold only characters SQS accepts (#x9 #xA #xD #x20–#xD7FF #xE000–#xFFFD #x10000–#x10FFFF), got U+0000 at byte 2"}},
		{"invalid UTF-8", sqsloop.OutgoingMessage{Body: "a\xff"}, []string{"got invalid UTF-8 at byte 1"}},
		{"U+FFFE", sqsloop.OutgoingMessage{Body: "\uFFFE"}, []string{"got U+FFFE at byte 0"}},
		{"body of 1 MiB", sqsloop.OutgoingMessage{Body: strings.Repeat("x", max)}, nil},
		{"body of 1 MiB + 1", sqsloop.OutgoingMessage{Body: strings.Repeat("x", max+1)},
			[]string{"Send: msgs[0]: must take at most 1048576 bytes, body and message attributes together (SQS message size limit), got 1048577"}},
		{"body and attribute over 1 MiB", sqsloop.OutgoingMessage{Body: strings.Repeat("x", max-11), MessageAttributes: map[string]sqsloop.MessageAttribute{"k": str("12345")}},
			[]string{"got 1048577"}}, // 1048565 + len("k") + len("String") + len("12345")
		{"body and attribute of 1 MiB", sqsloop.OutgoingMessage{Body: strings.Repeat("x", max-12), MessageAttributes: map[string]sqsloop.MessageAttribute{"k": str("12345")}}, nil},
		{"10 attributes", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: attrs(10)}, nil},
		{"11 attributes", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: attrs(11)}, []string{attr + ": must hold at most 10 attributes, got 11"}},
		{"attribute name with a space", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"a b": str("v")}},
			[]string{attr + `["a b"]: must have a name of letters, digits, '_', '-' and '.' only, got U+0020 at byte 1`}},
		{"attribute name AWS.", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"aws.x": str("v")}},
			[]string{attr + `["aws.x"]: must have a name not starting with "AWS." or "Amazon." (reserved)`}},
		{"attribute name Amazon.", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"Amazon.x": str("v")}},
			[]string{`["Amazon.x"]: must have a name not starting with "AWS."`}},
		{"attribute name with ..", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"a..b": str("v")}},
			[]string{`["a..b"]: must have a name neither starting nor ending with '.', nor holding ".."`}},
		{"attribute name ending in .", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"a.": str("v")}},
			[]string{`["a."]: must have a name neither starting nor ending with '.'`}},
		{"attribute name of 256", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{strings.Repeat("n", 256): str("v")}}, nil},
		{"attribute name of 257", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{strings.Repeat("n", 257): str("v")}},
			[]string{`"…]: must have a name of 1 to 256 characters, got 257`}},
		{"empty attribute name", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"": str("v")}},
			[]string{attr + `[""]: must have a name of 1 to 256 characters, got 0`}},
		{"data types", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{
			"s": {DataType: "String.label", StringValue: "v"},
			"n": {DataType: "Number.float", StringValue: "-1.5e+3"},
			"b": {DataType: "Binary", BinaryValue: []byte{0}},
		}}, nil},
		{"unknown data type", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "Text", StringValue: "v"}}},
			[]string{attr + `["k"].DataType: must be String, Number or Binary, optionally followed by .label, at most 256 characters, got "Text"`}},
		{"data type with an empty label", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "String.", StringValue: "v"}}},
			[]string{`.DataType: must be String, Number or Binary`}},
		{"empty string value", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": str("")}},
			[]string{attr + `["k"].StringValue: must not be empty in a String attribute`}},
		{"NUL in string value", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": str("\x00")}},
			[]string{`["k"].StringValue: must hold only characters SQS accepts`}},
		{"not a number", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "Number", StringValue: "1e"}}},
			[]string{`["k"].StringValue: must be a decimal number in a Number attribute, got "1e"`}},
		{"binary value on a string", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "String", StringValue: "v", BinaryValue: []byte{1}}}},
			[]string{`["k"].BinaryValue: must be empty in a String attribute, got 1 bytes`}},
		{"empty binary", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "Binary"}}},
			[]string{`["k"].BinaryValue: must not be empty in a Binary attribute`}},
		{"string value on a binary", sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{"k": {DataType: "Binary", BinaryValue: []byte{1}, StringValue: "v"}}},
			[]string{`["k"].StringValue: must be empty in a Binary attribute, got 1 bytes`}},
		{"Delay -1ns", sqsloop.OutgoingMessage{Body: "x", Delay: -1}, []string{delay + "-1ns"}},
		{"Delay 0", sqsloop.OutgoingMessage{Body: "x"}, nil},
		{"Delay 15m", sqsloop.OutgoingMessage{Body: "x", Delay: 15 * time.Minute}, nil},
		{"Delay 15m+1ns", sqsloop.OutgoingMessage{Body: "x", Delay: 15*time.Minute + 1}, []string{delay + "15m0.000000001s"}},
		{"Delay 16m", sqsloop.OutgoingMessage{Body: "x", Delay: 16 * time.Minute}, []string{delay + "16m0s"}},
		{"IDs of 128", sqsloop.OutgoingMessage{Body: "x", MessageGroupID: strings.Repeat("g", 128), DeduplicationID: "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"}, nil},
		{"group ID of 129", sqsloop.OutgoingMessage{Body: "x", MessageGroupID: strings.Repeat("g", 129)},
			[]string{group + "be at most 128 characters (SQS MessageGroupId), got 129"}},
		{"group ID with a space", sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "a b"},
			[]string{group + "hold only letters, digits and ASCII punctuation (SQS MessageGroupId), got U+0020 at byte 1"}},
		{"deduplication ID with é", sqsloop.OutgoingMessage{Body: "x", DeduplicationID: "é"},
			[]string{dedup + "hold only letters, digits and ASCII punctuation (SQS MessageDeduplicationId), got U+00E9 at byte 0"}},
		{"every problem, in order", sqsloop.OutgoingMessage{Delay: time.Hour, MessageGroupID: " ", DeduplicationID: " ",
			MessageAttributes: map[string]sqsloop.MessageAttribute{"z": str(""), "a": {DataType: "Bad"}}},
			[]string{body + "not be empty", attr + `["a"].DataType`, attr + `["z"].StringValue`, delay + "1h0m0s", group, dedup}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries, err := sqsloop.ValidateSend([]sqsloop.OutgoingMessage{c.m})
			if err != nil {
				t.Fatalf("call error %v, want entry results", err)
			}
			wantRule(t, entries[0], c.want...)
		})
	}
}

// The same bad message always gives the same text, whatever the order a map
// is iterated in.
func TestValidateSendIsDeterministic(t *testing.T) {
	m := sqsloop.OutgoingMessage{Body: "x", MessageAttributes: map[string]sqsloop.MessageAttribute{}}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		m.MessageAttributes[n] = sqsloop.MessageAttribute{DataType: "Bad"}
	}
	first, _ := sqsloop.ValidateSend([]sqsloop.OutgoingMessage{m})
	for range 20 {
		again, _ := sqsloop.ValidateSend([]sqsloop.OutgoingMessage{m})
		if again[0].Error() != first[0].Error() {
			t.Fatalf("text changed:\n%v\nthen\n%v", first[0], again[0])
		}
	}
}

// The valid entries of a Send may take 1 MiB together; more fails the call.
// An invalid entry does not count, since it is never sent.
func TestValidateSendBatchSize(t *testing.T) {
	half := strings.Repeat("x", sqsloop.MaxMessageSize/2)
	entries, err := sqsloop.ValidateSend([]sqsloop.OutgoingMessage{{Body: half}, {Body: half}})
	if err != nil || entries[0] != nil || entries[1] != nil {
		t.Fatalf("two halves of 1 MiB: %v, %v; want both valid", entries, err)
	}
	_, err = sqsloop.ValidateSend([]sqsloop.OutgoingMessage{{Body: half}, {Body: half + "x"}})
	want := "sqsloop: invalid argument: Send: msgs: must take at most 1048576 bytes together, bodies and message attributes of the valid entries (SQS BatchRequestTooLong), got 1048577"
	if !errors.Is(err, sqsloop.ErrInvalidArgument) || err.Error() != want {
		t.Fatalf("1 MiB + 1 byte in two entries: %v, want %q", err, want)
	}
	entries, err = sqsloop.ValidateSend([]sqsloop.OutgoingMessage{{Body: half}, {Body: half, Delay: -1}, {Body: half}})
	if err != nil || entries[0] != nil || entries[1] == nil || entries[2] != nil {
		t.Fatalf("1 MiB valid and an invalid half: %v, %v; want only entry 1 failed", entries, err)
	}
}

func TestWantsMessageAttribute(t *testing.T) {
	for _, tc := range []struct {
		names []string
		name  string
		want  bool
	}{
		{nil, "anything", true},
		{[]string{}, "anything", false},
		{[]string{"All"}, "x", true},
		{[]string{".*"}, "x", true},
		{[]string{"order.*"}, "order.id", true},
		{[]string{"order.*"}, "orders", false},
		{[]string{"order.*"}, "order", false},
		{[]string{"order*"}, "orders", false}, // a prefix must end at the dot
		{[]string{"a", "b"}, "b", true},
		{[]string{"A"}, "a", false}, // case-sensitive
	} {
		r := sqsloop.ReceiveRequest{MessageAttributeNames: tc.names}
		if got := r.WantsMessageAttribute(tc.name); got != tc.want {
			t.Errorf("names %q: WantsMessageAttribute(%q) = %v, want %v", tc.names, tc.name, got, tc.want)
		}
	}
}

// A bulk send takes 1–1,000 messages of 16 MiB together, each checked as
// Send checks it and named as a SendBulk entry; a message over 1 MiB fails
// alone.
func TestValidateSendBulk(t *testing.T) {
	msgs := make([]sqsloop.OutgoingMessage, sqsloop.MaxBulkSize)
	for i := range msgs {
		msgs[i].Body = "x"
	}
	msgs[999].Delay = -1
	entries, err := sqsloop.ValidateSendBulk(msgs)
	if err != nil || entries[0] != nil || entries[999] == nil {
		t.Fatalf("1,000 messages, the last invalid: %v, %v", entries[999], err)
	}
	if want := "sqsloop: invalid argument: SendBulk: msgs[999].Delay: must be between 0 and 15m (SQS DelaySeconds 0–900), got -1ns"; entries[999].Error() != want {
		t.Errorf("entry 999: %v, want %q", entries[999], want)
	}
	for _, n := range []int{0, sqsloop.MaxBulkSize + 1} {
		_, err := sqsloop.ValidateSendBulk(make([]sqsloop.OutgoingMessage, n))
		want := fmt.Sprintf("sqsloop: invalid argument: SendBulk: msgs: must hold between 1 and 1000 entries (MaxBulkSize), got %d", n)
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || err.Error() != want {
			t.Errorf("%d messages: %v, want %q", n, err, want)
		}
	}
	mib := strings.Repeat("x", sqsloop.MaxMessageSize)
	big := make([]sqsloop.OutgoingMessage, 17)
	for i := range big {
		big[i].Body = mib
	}
	big[16].Body += "x" // over 1 MiB: fails alone, and does not count
	if entries, err := sqsloop.ValidateSendBulk(big); err != nil || entries[15] != nil || !errors.Is(entries[16], sqsloop.ErrInvalidArgument) {
		t.Fatalf("16 MiB and a message over 1 MiB: %v, %v", entries[16], err)
	}
	big[16].Body = "x"
	want := "sqsloop: invalid argument: SendBulk: msgs: must take at most 16777216 bytes together (MaxBulkBytes), bodies and message attributes of the valid entries, got 16777217"
	if _, err := sqsloop.ValidateSendBulk(big); !errors.Is(err, sqsloop.ErrInvalidArgument) || err.Error() != want {
		t.Errorf("16 MiB + 1 byte: %v, want %q", err, want)
	}
}
