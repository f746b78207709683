package mailboxtest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// testPartialBatchFailurePerEntry: a batch with one bad entry fails that
// entry only; the call succeeds and the other entries take effect.
func testPartialBatchFailurePerEntry(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	ids := SendBodies(ctx, t, q.Mailbox, "keep", "deleted", "nack")
	msgs := ReceiveN(ctx, t, q.Mailbox, 3, patience, longLease)
	byBody := map[string]*sqsloop.Message{}
	for _, m := range msgs {
		byBody[m.Body] = m
	}
	keep, gone, nack := byBody["keep"], byBody["deleted"], byBody["nack"]
	if keep == nil || gone == nil || nack == nil {
		t.Fatalf("received %s, want the three bodies sent (IDs %v)", describe(msgs), ids)
	}
	AckAll(ctx, t, q.Mailbox, gone) // its handle is now stale

	errs, err := q.Mailbox.ChangeVisibility(ctx, []sqsloop.VisibilityChange{
		{ReceiptHandle: keep.ReceiptHandle, Timeout: longLease},
		{ReceiptHandle: gone.ReceiptHandle, Timeout: longLease},
		{ReceiptHandle: nack.ReceiptHandle, Timeout: 0},
	})
	if err != nil {
		t.Fatalf("ChangeVisibility with one stale entry failed as a whole: %v", err)
	}
	if len(errs) != 3 || errs[0] != nil || !errors.Is(errs[1], sqsloop.ErrReceiptHandleExpired) || errs[2] != nil {
		t.Fatalf("ChangeVisibility entry errors = %v, want [nil ErrReceiptHandleExpired nil]", errs)
	}
	// Only the nacked entry took effect as a reveal; "keep" stays hidden.
	back := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	if back.ID != nack.ID {
		t.Fatalf("after the batch: received %s, want only the nacked message %s", describe([]*sqsloop.Message{back}), nack.ID)
	}

	// A delete with the stale handle succeeds and deletes nothing, as SQS
	// documents for DeleteMessage; the other entries delete.
	errs, err = q.Mailbox.Delete(ctx, []string{keep.ReceiptHandle, gone.ReceiptHandle, back.ReceiptHandle})
	if err != nil {
		t.Fatalf("Delete with one stale entry failed as a whole: %v", err)
	}
	if len(errs) != 3 || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("Delete entry errors = %v, want [nil nil nil] (SQS accepts a stale handle)", errs)
	}
	ExpectNone(ctx, t, q.Mailbox, settle)

	// A send batch with one entry SQS refuses (U+0000 is not allowed in a
	// body) fails that entry alone, with sqsloop's rule's error; the other
	// entries are sent.
	out := []sqsloop.OutgoingMessage{{Body: "good 1"}, {Body: "bad \x00 body"}, {Body: "good 2"}}
	res, err := q.Mailbox.Send(ctx, out)
	if err != nil || len(res) != 3 || res[0].Err != nil || res[2].Err != nil {
		t.Fatalf("Send with one invalid body = %+v, %v; want only entry 1 failed", res, err)
	}
	want, _ := sqsloop.ValidateSend(out)
	sameRule(t, "Send entry 1", res[1].Err, want[1])
	got := ReceiveN(ctx, t, q.Mailbox, 2, patience, longLease)
	for _, m := range got {
		if !strings.HasPrefix(m.Body, "good") {
			t.Errorf("received %q, which Send reported failed", m.Body)
		}
	}
	AckAll(ctx, t, q.Mailbox, got...)
}

// testBatchLimits: SQS's limits (1–10 entries; MaxMessages 1–10; WaitTime
// 0–20 s; visibility 0–12 h) are enforced with sqsloop's rules' errors
// (wrapping ErrInvalidArgument), a batch size failing the whole call and a
// visibility change's timeout its entry; and a receive never returns more
// than asked.
func testBatchLimits(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	mb := q.Mailbox

	eleven := make([]string, sqsloop.MaxBatchSize+1)
	for i := range eleven {
		eleven[i] = "body"
	}
	SendBodies(ctx, t, mb, eleven...) // SendBodies splits into batches of 10

	// Receive returns at most MaxMessages.
	msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 3, VisibilityTimeout: longLease, WaitTime: time.Second})
	if err != nil || len(msgs) == 0 || len(msgs) > 3 {
		t.Fatalf("Receive(MaxMessages 3) = %d messages, %v; want 1–3", len(msgs), err)
	}
	handle := msgs[0].ReceiptHandle

	for _, n := range []int{0, sqsloop.MaxBatchSize + 1} {
		handles := make([]string, n)
		changes := make([]sqsloop.VisibilityChange, n)
		out := make([]sqsloop.OutgoingMessage, n)
		for i := range n {
			handles[i] = handle
			changes[i] = sqsloop.VisibilityChange{ReceiptHandle: handle, Timeout: longLease}
			out[i] = sqsloop.OutgoingMessage{Body: "x"}
		}
		_, err := mb.Delete(ctx, handles)
		_, want := sqsloop.ValidateDelete(handles)
		sameRule(t, fmt.Sprintf("Delete with %d entries", n), err, want)
		_, err = mb.ChangeVisibility(ctx, changes)
		_, want = sqsloop.ValidateChangeVisibility(changes)
		sameRule(t, fmt.Sprintf("ChangeVisibility with %d entries", n), err, want)
		_, err = mb.Send(ctx, out)
		_, want = sqsloop.ValidateSend(out)
		sameRule(t, fmt.Sprintf("Send with %d entries", n), err, want)
	}

	for _, req := range []sqsloop.ReceiveRequest{
		{MaxMessages: 0, VisibilityTimeout: longLease},
		{MaxMessages: 11, VisibilityTimeout: longLease},
		{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: sqsloop.MaxWaitTime + time.Second},
		{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: -time.Second},
		{MaxMessages: 1, VisibilityTimeout: sqsloop.MaxVisibilityTimeout + time.Second},
		{MaxMessages: 1, VisibilityTimeout: -time.Second},
	} {
		_, err := mb.Receive(ctx, req)
		sameRule(t, fmt.Sprintf("Receive(%+v)", req), err, req.Validate())
	}
	for _, d := range []time.Duration{-time.Second, sqsloop.MaxVisibilityTimeout + time.Second} {
		changes := []sqsloop.VisibilityChange{{ReceiptHandle: handle, Timeout: d}}
		errs, err := mb.ChangeVisibility(ctx, changes)
		want, _ := sqsloop.ValidateChangeVisibility(changes)
		sameEntries(t, fmt.Sprintf("ChangeVisibility(%v)", d), errs, err, want)
	}
	AckAll(ctx, t, mb, msgs...)
}

// testSendBulk: a Mailbox that is a sqsloop.BulkSender stores a bulk of up
// to 1,000 messages as Send stores a batch: each valid entry with its own
// message ID, an invalid one failing alone with the rule's error
// (sqsloop.ValidateSendBulk's), and a bulk over the limits refused whole.
// It skips for a Mailbox that is not one (SQS has no such call).
func testSendBulk(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	bulk, ok := q.Mailbox.(sqsloop.BulkSender)
	if !ok {
		t.Skip("the Mailbox is not a sqsloop.BulkSender")
	}
	out := make([]sqsloop.OutgoingMessage, 25)
	for i := range out {
		out[i].Body = fmt.Sprintf("bulk %02d", i)
	}
	out[7].Body = "bad \x00 body"
	res, err := bulk.SendBulk(ctx, out)
	if err != nil || len(res) != len(out) {
		t.Fatalf("SendBulk of 25 with one invalid = %d results, %v; want 25 results", len(res), err)
	}
	want, _ := sqsloop.ValidateSendBulk(out)
	sameRule(t, "SendBulk entry 7", res[7].Err, want[7])
	ids := map[string]string{}
	for i, r := range res {
		if i != 7 && (r.Err != nil || r.MessageID == "") {
			t.Fatalf("SendBulk entry %d = %+v, want sent", i, r)
		}
		ids[r.MessageID] = out[i].Body
	}
	got := ReceiveN(ctx, t, q.Mailbox, 24, patience, longLease)
	for _, m := range got {
		if ids[m.ID] != m.Body {
			t.Errorf("received %s %q, which SendBulk did not report sent with that ID", m.ID, m.Body)
		}
	}
	AckAll(ctx, t, q.Mailbox, got...)
	_, err = bulk.SendBulk(ctx, make([]sqsloop.OutgoingMessage, sqsloop.MaxBulkSize+1))
	_, rule := sqsloop.ValidateSendBulk(make([]sqsloop.OutgoingMessage, sqsloop.MaxBulkSize+1))
	sameRule(t, "SendBulk of 1,001", err, rule)
	ExpectNone(ctx, t, q.Mailbox, settle)
}
