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

// sqsmailbox checks every request with sqsloop's rules and returns their
// errors unchanged, whole-call and per entry, and a request (or an entry)
// that breaks one never reaches SQS. Here, without a server, one request
// of each method shows it; the conformance suite's TestBatchLimits and
// TestRequestRulesAreSqsloops check the same rules, and more, on every
// Mailbox (TestSqsmailboxConformance, on a real server).
func TestRequestRulesAreSqsloops(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	ctx := t.Context()

	req := sqsloop.ReceiveRequest{MaxMessages: 11, VisibilityTimeout: 13 * time.Hour, WaitTime: 21 * time.Second}
	_, err := m.Receive(ctx, req)
	sameError(t, "Receive", err, req.Validate())

	_, err = m.Delete(ctx, nil)
	_, want := sqsloop.ValidateDelete(nil)
	sameError(t, "Delete batch", err, want)

	changes := []sqsloop.VisibilityChange{{Timeout: -1}, {ReceiptHandle: "h", Timeout: 12*time.Hour + 1}}
	errs, err := m.ChangeVisibility(ctx, changes)
	wantEntries, _ := sqsloop.ValidateChangeVisibility(changes)
	if err != nil || len(errs) != len(changes) {
		t.Fatalf("ChangeVisibility = %v, %v; want %d entry results", errs, err, len(changes))
	}
	for i := range changes {
		sameError(t, "ChangeVisibility entry", errs[i], wantEntries[i])
	}

	msgs := []sqsloop.OutgoingMessage{{}, {Body: "x", MessageGroupID: "a b", DeduplicationID: strings.Repeat("d", 129)}}
	res, err := m.Send(ctx, msgs)
	wantEntries, _ = sqsloop.ValidateSend(msgs)
	if err != nil || len(res) != len(msgs) {
		t.Fatalf("Send = %v, %v; want %d entry results", res, err, len(msgs))
	}
	for i := range msgs {
		sameError(t, "Send entry", res[i].Err, wantEntries[i])
	}

	half := strings.Repeat("x", sqsloop.MaxMessageSize/2)
	msgs = []sqsloop.OutgoingMessage{{Body: half}, {Body: half + "x"}}
	_, err = m.Send(ctx, msgs)
	_, want = sqsloop.ValidateSend(msgs)
	sameError(t, "Send total", err, want)

	if n := f.calls(); n != 0 {
		t.Errorf("%d calls reached SQS, want none", n)
	}
}
