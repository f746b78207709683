package sqsmailbox

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// sameError fails t unless got is want, text and all: the rule's own error
// from package sqsloop, wrapping sqsloop.ErrInvalidArgument.
func sameError(t *testing.T, what string, got, want error) {
	t.Helper()
	if want == nil || !errors.Is(got, sqsloop.ErrInvalidArgument) || got.Error() != want.Error() {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// A request that breaks a rule of every queue fails with sqsloop's error for
// that rule, unchanged, as it does on memmailbox, and never reaches SQS.
func TestRequestRulesAreSqsloops(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	ctx := t.Context()

	req := sqsloop.ReceiveRequest{MaxMessages: 11, VisibilityTimeout: 13 * time.Hour, WaitTime: 21 * time.Second}
	_, err := m.Receive(ctx, req)
	sameError(t, "Receive", err, req.Validate())

	for _, n := range []int{0, 11} {
		handles := make([]string, n)
		_, err = m.Delete(ctx, handles)
		_, want := sqsloop.ValidateDelete(handles)
		sameError(t, "Delete batch", err, want)

		changes := make([]sqsloop.VisibilityChange, n)
		_, err = m.ChangeVisibility(ctx, changes)
		_, want = sqsloop.ValidateChangeVisibility(changes)
		sameError(t, "ChangeVisibility batch", err, want)

		msgs := make([]sqsloop.OutgoingMessage, n)
		_, err = m.Send(ctx, msgs)
		_, want = sqsloop.ValidateSend(msgs)
		sameError(t, "Send batch", err, want)
	}

	handles := []string{"", ""}
	errs, err := m.Delete(ctx, handles)
	want, _ := sqsloop.ValidateDelete(handles)
	if err != nil {
		t.Fatal(err)
	}
	for i := range handles {
		sameError(t, "Delete entry", errs[i], want[i])
	}

	changes := []sqsloop.VisibilityChange{{Timeout: -1}, {ReceiptHandle: "h", Timeout: 12*time.Hour + 1}}
	errs, err = m.ChangeVisibility(ctx, changes)
	want, _ = sqsloop.ValidateChangeVisibility(changes)
	if err != nil {
		t.Fatal(err)
	}
	for i := range changes {
		sameError(t, "ChangeVisibility entry", errs[i], want[i])
	}

	msgs := []sqsloop.OutgoingMessage{
		{},
		{Body: "x", Delay: time.Hour, MessageAttributes: map[string]sqsloop.MessageAttribute{"AWS.x": {DataType: "Text"}, "n": {DataType: "Number", StringValue: "one"}}},
		{Body: "x", MessageGroupID: "a b", DeduplicationID: strings.Repeat("d", 129)},
		{Body: strings.Repeat("x", sqsloop.MaxMessageSize+1)},
	}
	res, err := m.Send(ctx, msgs)
	want, _ = sqsloop.ValidateSend(msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range msgs {
		sameError(t, "Send entry", res[i].Err, want[i])
	}

	half := strings.Repeat("x", sqsloop.MaxMessageSize/2)
	msgs = []sqsloop.OutgoingMessage{{Body: half}, {Body: half + "x"}}
	_, err = m.Send(ctx, msgs)
	_, wantErr := sqsloop.ValidateSend(msgs)
	sameError(t, "Send total", err, wantErr)

	if n := f.calls(); n != 0 {
		t.Errorf("%d calls reached SQS, want none", n)
	}
}
