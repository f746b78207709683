package mailboxtest

import (
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// testRequestRulesAreSqsloops: a request that breaks several of the rules
// every queue has fails with package sqsloop's error for them, text and
// all: a receive with every problem joined, and entries that fail alone
// with every problem of each (TestBatchLimits checks the batch sizes and
// ranges one by one). Nothing of such a request reaches the queue.
func testRequestRulesAreSqsloops(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	mb := q.Mailbox

	req := sqsloop.ReceiveRequest{MaxMessages: 11, VisibilityTimeout: 13 * time.Hour, WaitTime: 21 * time.Second, MessageAttributeNames: []string{""}}
	_, err := mb.Receive(ctx, req)
	sameRule(t, "Receive", err, req.Validate())

	handles := []string{"", ""}
	errs, err := mb.Delete(ctx, handles)
	want, _ := sqsloop.ValidateDelete(handles)
	sameEntries(t, "Delete", errs, err, want)

	changes := []sqsloop.VisibilityChange{{Timeout: -1}, {ReceiptHandle: "h", Timeout: 12*time.Hour + 1}}
	errs, err = mb.ChangeVisibility(ctx, changes)
	want, _ = sqsloop.ValidateChangeVisibility(changes)
	sameEntries(t, "ChangeVisibility", errs, err, want)

	msgs := []sqsloop.OutgoingMessage{
		{},
		{Body: "x", Delay: time.Hour, MessageAttributes: map[string]sqsloop.MessageAttribute{"AWS.x": {DataType: "Text"}, "n": {DataType: "Number", StringValue: "one"}}},
		{Body: "x", MessageGroupID: "a b", DeduplicationID: strings.Repeat("d", 129)},
		{Body: strings.Repeat("x", sqsloop.MaxMessageSize+1)},
	}
	res, err := mb.Send(ctx, msgs)
	want, _ = sqsloop.ValidateSend(msgs)
	errs = make([]error, len(res))
	for i, r := range res {
		errs[i] = r.Err
	}
	sameEntries(t, "Send", errs, err, want)

	half := strings.Repeat("x", sqsloop.MaxMessageSize/2)
	msgs = []sqsloop.OutgoingMessage{{Body: half}, {Body: half + "x"}}
	_, err = mb.Send(ctx, msgs)
	_, wantErr := sqsloop.ValidateSend(msgs)
	sameRule(t, "Send of 1 MiB + 1 byte in all", err, wantErr)

	// Nothing was sent, not even the message that asked for an hour's
	// delay: in virtual time the scenario waits that hour out.
	if h.Features().VirtualTime {
		if err := h.Sleep(ctx, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	ExpectNone(ctx, t, mb, settle)
}
