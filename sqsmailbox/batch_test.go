package sqsmailbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/sqsloop/sqsloop"
)

func handles(n int) []string {
	hs := make([]string, n)
	for i := range hs {
		hs[i] = fmt.Sprintf("rh-%d", i)
	}
	return hs
}

func failure(id, code, msg string, sender bool) types.BatchResultErrorEntry {
	return types.BatchResultErrorEntry{Id: aws.String(id), Code: aws.String(code), Message: aws.String(msg), SenderFault: sender}
}

// checkMixed checks the per-entry results of a 4-entry batch answered with
// 0 and 2 successful, 1 failed with ReceiptHandleIsInvalid, 3 in neither list.
func checkMixed(t *testing.T, errs []error) {
	t.Helper()
	if len(errs) != 4 {
		t.Fatalf("got %d results, want 4", len(errs))
	}
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("entries 0 and 2 = %v, %v; want nil", errs[0], errs[2])
	}
	if !errors.Is(errs[1], sqsloop.ErrReceiptHandleExpired) {
		t.Errorf("entry 1 = %v, want ErrReceiptHandleExpired", errs[1])
	}
	var apiErr smithy.APIError
	if !errors.As(errs[1], &apiErr) || apiErr.ErrorCode() != "ReceiptHandleIsInvalid" || apiErr.ErrorFault() != smithy.FaultClient {
		t.Errorf("entry 1 does not carry the entry's code and sender fault: %v", errs[1])
	}
	if !errors.Is(errs[3], errNoResult) || !strings.Contains(errs[3].Error(), "no result for entry") {
		t.Errorf("entry 3 = %v, want a 'no result for entry' error", errs[3])
	}
	for i, err := range errs {
		if err != nil && strings.Contains(err.Error(), "rh-") {
			t.Errorf("entry %d error leaks a receipt handle: %v", i, err)
		}
	}
}

func TestDeletePerEntryResults(t *testing.T) {
	f := &fakeAPI{onDelete: func(context.Context, *sqs.DeleteMessageBatchInput) (*sqs.DeleteMessageBatchOutput, error) {
		return &sqs.DeleteMessageBatchOutput{
			Successful: []types.DeleteMessageBatchResultEntry{{Id: aws.String("2")}, {Id: aws.String("0")}, {Id: aws.String("99")}},
			Failed:     []types.BatchResultErrorEntry{failure("1", "ReceiptHandleIsInvalid", "The input receipt handle is invalid.", true)},
		}, nil
	}}
	m := newTestMailbox(t, f)
	errs, err := m.Delete(t.Context(), handles(4))
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	checkMixed(t, errs)
	in := f.deletes[0]
	if aws.ToString(in.QueueUrl) != testQueueURL || len(in.Entries) != 4 {
		t.Fatalf("DeleteMessageBatch input = %+v", in)
	}
	for i, e := range in.Entries {
		if aws.ToString(e.Id) != fmt.Sprint(i) || aws.ToString(e.ReceiptHandle) != fmt.Sprintf("rh-%d", i) {
			t.Errorf("entry %d = Id %q, ReceiptHandle %q", i, aws.ToString(e.Id), aws.ToString(e.ReceiptHandle))
		}
	}
}

func TestChangeVisibilityPerEntryResults(t *testing.T) {
	f := &fakeAPI{onChange: func(context.Context, *sqs.ChangeMessageVisibilityBatchInput) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
		return &sqs.ChangeMessageVisibilityBatchOutput{
			Successful: []types.ChangeMessageVisibilityBatchResultEntry{{Id: aws.String("0")}, {Id: aws.String("2")}},
			Failed:     []types.BatchResultErrorEntry{failure("1", "ReceiptHandleIsInvalid", "stale", true)},
		}, nil
	}}
	m := newTestMailbox(t, f)
	changes := make([]sqsloop.VisibilityChange, 4)
	for i, h := range handles(4) {
		changes[i] = sqsloop.VisibilityChange{ReceiptHandle: h, Timeout: time.Duration(i) * time.Minute}
	}
	errs, err := m.ChangeVisibility(t.Context(), changes)
	if err != nil {
		t.Fatalf("ChangeVisibility: %v", err)
	}
	checkMixed(t, errs)
}

func TestSendPerEntryResults(t *testing.T) {
	f := &fakeAPI{onSend: func(context.Context, *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		return &sqs.SendMessageBatchOutput{
			Successful: []types.SendMessageBatchResultEntry{{Id: aws.String("0"), MessageId: aws.String("id-0")}, {Id: aws.String("2"), MessageId: aws.String("id-2")}},
			Failed:     []types.BatchResultErrorEntry{failure("1", "ReceiptHandleIsInvalid", "odd but mapped", true)},
		}, nil
	}}
	m := newTestMailbox(t, f)
	msgs := []sqsloop.OutgoingMessage{{Body: "a"}, {Body: "b"}, {Body: "c"}, {Body: "d"}}
	res, err := m.Send(t.Context(), msgs)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	errs := make([]error, len(res))
	for i, r := range res {
		errs[i] = r.Err
	}
	checkMixed(t, errs)
	if res[0].MessageID != "id-0" || res[2].MessageID != "id-2" || res[1].MessageID != "" || res[3].MessageID != "" {
		t.Errorf("MessageIDs = %q %q %q %q", res[0].MessageID, res[1].MessageID, res[2].MessageID, res[3].MessageID)
	}
}

func TestSendFailedEntryInvalidArgument(t *testing.T) {
	f := &fakeAPI{onSend: func(context.Context, *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		return &sqs.SendMessageBatchOutput{
			Failed: []types.BatchResultErrorEntry{
				failure("0", "InvalidParameterValue", "The request must contain the parameter MessageGroupId.", true),
				failure("1", "InternalError", "We encountered an internal error.", false),
			},
		}, nil
	}}
	m := newTestMailbox(t, f)
	res, err := m.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "a"}, {Body: "b"}})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if !errors.Is(res[0].Err, sqsloop.ErrInvalidArgument) {
		t.Errorf("entry 0 = %v, want ErrInvalidArgument", res[0].Err)
	}
	var apiErr smithy.APIError
	if res[1].Err == nil || sentinelFor(res[1].Err) != nil || !errors.As(res[1].Err, &apiErr) || apiErr.ErrorFault() != smithy.FaultServer {
		t.Errorf("entry 1 = %v, want a transient server-fault error with no sentinel", res[1].Err)
	}
}

func TestSendRequestShape(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	res, err := m.Send(t.Context(), []sqsloop.OutgoingMessage{
		{Body: "plain"},
		{Body: "fifo", MessageGroupID: "g", DeduplicationID: "d"},
		{Body: "late", Delay: 1500 * time.Millisecond, MessageAttributes: map[string]sqsloop.MessageAttribute{
			"s": {DataType: "String", StringValue: "x"},
			"n": {DataType: "Number.float", StringValue: "1.5"},
			"b": {DataType: "Binary.png", BinaryValue: []byte{9}},
		}},
	})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	for i, r := range res {
		if r.Err != nil || r.MessageID != fmt.Sprintf("msg-%d", i) {
			t.Errorf("result %d = %+v", i, r)
		}
	}
	e := f.sends[0].Entries
	if e[0].MessageGroupId != nil || e[0].MessageDeduplicationId != nil || e[0].DelaySeconds != 0 || e[0].MessageAttributes != nil {
		t.Errorf("plain entry carries FIFO fields, delay or attributes: %+v", e[0])
	}
	if aws.ToString(e[1].MessageGroupId) != "g" || aws.ToString(e[1].MessageDeduplicationId) != "d" {
		t.Errorf("FIFO entry = group %q, dedup %q", aws.ToString(e[1].MessageGroupId), aws.ToString(e[1].MessageDeduplicationId))
	}
	if e[2].DelaySeconds != 2 {
		t.Errorf("DelaySeconds = %d, want 2 (1.5 s rounded up)", e[2].DelaySeconds)
	}
	a := e[2].MessageAttributes
	if aws.ToString(a["s"].StringValue) != "x" || aws.ToString(a["n"].DataType) != "Number.float" || aws.ToString(a["n"].StringValue) != "1.5" ||
		a["b"].StringValue != nil || len(a["b"].BinaryValue) != 1 || aws.ToString(a["b"].DataType) != "Binary.png" {
		t.Errorf("MessageAttributes = %+v", a)
	}
}

// A nack (visibility 0) must reach SQS as VisibilityTimeout 0, not be left
// out; timeouts are rounded up to whole seconds.
func TestChangeVisibilityZeroAndRounding(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	errs, err := m.ChangeVisibility(t.Context(), []sqsloop.VisibilityChange{
		{ReceiptHandle: "rh-0", Timeout: 0},
		{ReceiptHandle: "rh-1", Timeout: 1500 * time.Millisecond},
		{ReceiptHandle: "rh-2", Timeout: sqsloop.MaxVisibilityTimeout},
	})
	if err != nil {
		t.Fatalf("ChangeVisibility: %v", err)
	}
	for i, e := range errs {
		if e != nil {
			t.Errorf("entry %d: %v", i, e)
		}
	}
	want := []int32{0, 2, 43200}
	for i, e := range f.changes[0].Entries {
		if e.VisibilityTimeout != want[i] || aws.ToString(e.ReceiptHandle) != fmt.Sprintf("rh-%d", i) || aws.ToString(e.Id) != fmt.Sprint(i) {
			t.Errorf("entry %d = %+v, want VisibilityTimeout %d", i, e, want[i])
		}
	}
}

func TestBatchValidation(t *testing.T) {
	long := make([]sqsloop.VisibilityChange, 11)
	for i := range long {
		long[i] = sqsloop.VisibilityChange{ReceiptHandle: "rh"}
	}
	// first returns the call's error, else the first entry error.
	first := func(errs []error, err error) error {
		if err != nil {
			return err
		}
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
		return nil
	}
	firstSend := func(res []sqsloop.SendResult, err error) error {
		errs := make([]error, len(res))
		for i, r := range res {
			errs[i] = r.Err
		}
		return first(errs, err)
	}
	// Call-level problems fail the call; an invalid entry fails alone, is
	// not sent, and the valid entries of the batch still go out (calls 1).
	cases := []struct {
		name  string
		call  func(m *Mailbox) error
		field string
		calls int
	}{
		{"delete none", func(m *Mailbox) error { return first(m.Delete(t.Context(), nil)) }, "receiptHandles", 0},
		{"delete 11", func(m *Mailbox) error { return first(m.Delete(t.Context(), handles(11))) }, "receiptHandles", 0},
		{"delete empty handle", func(m *Mailbox) error { return first(m.Delete(t.Context(), []string{"a", ""})) }, "receiptHandles[1]", 1},
		{"change none", func(m *Mailbox) error { return first(m.ChangeVisibility(t.Context(), nil)) }, "changes", 0},
		{"change 11", func(m *Mailbox) error { return first(m.ChangeVisibility(t.Context(), long)) }, "changes", 0},
		{"change empty handle", func(m *Mailbox) error {
			return first(m.ChangeVisibility(t.Context(), []sqsloop.VisibilityChange{{}}))
		}, "changes[0].ReceiptHandle", 0},
		{"change past 12h", func(m *Mailbox) error {
			return first(m.ChangeVisibility(t.Context(), []sqsloop.VisibilityChange{{ReceiptHandle: "a"}, {ReceiptHandle: "b", Timeout: 12*time.Hour + time.Second}}))
		}, "changes[1].Timeout", 1},
		{"change negative", func(m *Mailbox) error {
			return first(m.ChangeVisibility(t.Context(), []sqsloop.VisibilityChange{{ReceiptHandle: "a", Timeout: -time.Second}}))
		}, "changes[0].Timeout", 0},
		{"send none", func(m *Mailbox) error { return firstSend(m.Send(t.Context(), nil)) }, "msgs", 0},
		{"send 11", func(m *Mailbox) error { return firstSend(m.Send(t.Context(), make([]sqsloop.OutgoingMessage, 11))) }, "msgs", 0},
		{"send empty body", func(m *Mailbox) error { return firstSend(m.Send(t.Context(), []sqsloop.OutgoingMessage{{}})) }, "msgs[0].Body", 0},
		{"send delay past 15 min", func(m *Mailbox) error {
			return firstSend(m.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "ok"}, {Body: "a", Delay: 16 * time.Minute}}))
		}, "msgs[1].Delay", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeAPI{}
			m := newTestMailbox(t, f)
			err := c.call(m)
			if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want ErrInvalidArgument naming %s", err, c.field)
			}
			if f.calls() != c.calls {
				t.Errorf("calls = %d, want %d", f.calls(), c.calls)
			}
		})
	}
}

// An invalid entry fails alone: the valid ones of its batch are sent, with
// their own Ids, and their results land at their own places.
func TestInvalidEntryFailsAlone(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	errs, err := m.ChangeVisibility(t.Context(), []sqsloop.VisibilityChange{
		{ReceiptHandle: "a", Timeout: time.Minute},
		{ReceiptHandle: "b", Timeout: 13 * time.Hour},
		{ReceiptHandle: "c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], sqsloop.ErrInvalidArgument) {
		t.Fatalf("errs = %v, want only entry 1 failed", errs)
	}
	f.mu.Lock()
	in := f.changes[len(f.changes)-1]
	f.mu.Unlock()
	if len(in.Entries) != 2 || aws.ToString(in.Entries[0].Id) != "0" || aws.ToString(in.Entries[1].Id) != "2" {
		t.Fatalf("sent %+v, want entries 0 and 2", in.Entries)
	}
}

func TestBatchOfTenIsAccepted(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	errs, err := m.Delete(t.Context(), handles(10))
	if err != nil || len(errs) != 10 {
		t.Fatalf("Delete(10) = %d results, %v", len(errs), err)
	}
	for i, e := range errs {
		if e != nil {
			t.Errorf("entry %d: %v", i, e)
		}
	}
	if got := aws.ToString(f.deletes[0].Entries[9].Id); got != "9" {
		t.Errorf("last entry Id = %q, want 9", got)
	}
}

func TestEntryIndex(t *testing.T) {
	cases := []struct {
		id   *string
		want int
		ok   bool
	}{
		{aws.String("0"), 0, true},
		{aws.String("9"), 9, true},
		{aws.String("10"), 0, false},
		{aws.String("-1"), 0, false},
		{aws.String("01"), 0, false},
		{aws.String("+1"), 0, false},
		{aws.String("x"), 0, false},
		{nil, 0, false},
	}
	for _, c := range cases {
		got, ok := entryIndex(c.id, 10)
		if got != c.want || ok != c.ok {
			t.Errorf("entryIndex(%q) = %d, %v; want %d, %v", aws.ToString(c.id), got, ok, c.want, c.ok)
		}
	}
}
