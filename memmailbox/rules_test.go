package memmailbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
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
// that rule, unchanged, as it does on sqsmailbox.
func TestRequestRulesAreSqsloops(t *testing.T) {
	_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
	ctx := context.Background()

	req := sqsloop.ReceiveRequest{MaxMessages: 11, VisibilityTimeout: 13 * time.Hour, WaitTime: 21 * time.Second}
	_, err := q.Receive(ctx, req)
	sameError(t, "Receive", err, req.Validate())

	for _, n := range []int{0, 11} {
		handles := make([]string, n)
		_, err = q.Delete(ctx, handles)
		_, want := sqsloop.ValidateDelete(handles)
		sameError(t, "Delete batch", err, want)

		changes := make([]sqsloop.VisibilityChange, n)
		_, err = q.ChangeVisibility(ctx, changes)
		_, want = sqsloop.ValidateChangeVisibility(changes)
		sameError(t, "ChangeVisibility batch", err, want)

		msgs := make([]sqsloop.OutgoingMessage, n)
		_, err = q.Send(ctx, msgs)
		_, want = sqsloop.ValidateSend(msgs)
		sameError(t, "Send batch", err, want)
	}

	handles := []string{"", ""}
	errs, err := q.Delete(ctx, handles)
	want, _ := sqsloop.ValidateDelete(handles)
	if err != nil {
		t.Fatal(err)
	}
	for i := range handles {
		sameError(t, "Delete entry", errs[i], want[i])
	}

	changes := []sqsloop.VisibilityChange{{Timeout: -1}, {ReceiptHandle: "h", Timeout: 12*time.Hour + 1}}
	errs, err = q.ChangeVisibility(ctx, changes)
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
	res, err := q.Send(ctx, msgs)
	want, _ = sqsloop.ValidateSend(msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range msgs {
		sameError(t, "Send entry", res[i].Err, want[i])
	}

	half := strings.Repeat("x", sqsloop.MaxMessageSize/2)
	msgs = []sqsloop.OutgoingMessage{{Body: half}, {Body: half + "x"}}
	_, err = q.Send(ctx, msgs)
	_, wantErr := sqsloop.ValidateSend(msgs)
	sameError(t, "Send total", err, wantErr)

	wantStats(t, q, 0, 0, 0)
}
