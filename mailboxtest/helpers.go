package mailboxtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Durations the scenarios use. Real servers count whole seconds, so every
// value is a whole number of seconds, and each wait has at least a second of
// margin on either side of the instant it checks.
const (
	// longLease keeps a message hidden for the rest of a scenario.
	longLease = 30 * time.Second
	// shortLease lapses within a scenario.
	shortLease = 2 * time.Second
	// settle is how long a long poll that must come back empty waits.
	settle = 1 * time.Second
	// patience bounds a wait for a message that must arrive.
	patience = 10 * time.Second
)

// receiveOne long-polls mb until one message arrives, hiding it for vis, and
// fails t when none has arrived within d. Each poll waits whole seconds (at
// most 20, SQS's limit), so on a real server it returns as soon as the
// message is visible; in a synctest bubble the waits are virtual.
func receiveOne(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, d, vis time.Duration) *sqsloop.Message {
	t.Helper()
	msgs := ReceiveN(ctx, t, mb, 1, d, vis)
	return msgs[0]
}

// ReceiveN long-polls mb (up to 10 messages per call, hiding each for vis)
// until n messages have arrived, and fails t when fewer have arrived within
// d or when more than n arrive. It returns them in the order received.
func ReceiveN(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, n int, d, vis time.Duration) []*sqsloop.Message {
	t.Helper()
	var got []*sqsloop.Message
	deadline := time.Now().Add(d)
	for polls := 0; len(got) < n; polls++ {
		wait := pollWait(deadline)
		if wait <= 0 || polls > maxPolls(d) {
			break
		}
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{
			MaxMessages:       min(n-len(got), sqsloop.MaxBatchSize),
			VisibilityTimeout: vis,
			WaitTime:          wait,
		})
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		got = append(got, msgs...)
	}
	if len(got) != n {
		t.Fatalf("received %d messages within %v, want %d: %s", len(got), d, n, describe(got))
	}
	return got
}

// ExpectNone long-polls mb once for wait and fails t if any message arrives.
func ExpectNone(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, wait time.Duration) {
	t.Helper()
	msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{
		MaxMessages:       sqsloop.MaxBatchSize,
		VisibilityTimeout: longLease,
		WaitTime:          wait,
	})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if len(msgs) > 0 {
		t.Fatalf("received %d messages, want none: %s", len(msgs), describe(msgs))
	}
}

// SendBodies sends one message per body, in batches of at most 10, and fails
// t on any error. It returns the message IDs in the order of bodies.
func SendBodies(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, bodies ...string) []string {
	t.Helper()
	msgs := make([]sqsloop.OutgoingMessage, len(bodies))
	for i, b := range bodies {
		msgs[i] = sqsloop.OutgoingMessage{Body: b}
	}
	return SendAll(ctx, t, mb, msgs...)
}

// SendAll sends msgs in batches of at most 10 and fails t on any error,
// whole-call or per-entry. It returns the message IDs in the order of msgs.
func SendAll(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, msgs ...sqsloop.OutgoingMessage) []string {
	t.Helper()
	var ids []string
	for start := 0; start < len(msgs); start += sqsloop.MaxBatchSize {
		batch := msgs[start:min(start+sqsloop.MaxBatchSize, len(msgs))]
		res, err := mb.Send(ctx, batch)
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		if len(res) != len(batch) {
			t.Fatalf("Send returned %d results for %d entries", len(res), len(batch))
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("Send entry %d: %v", start+i, r.Err)
			}
			if r.MessageID == "" {
				t.Fatalf("Send entry %d: empty MessageID", start+i)
			}
			ids = append(ids, r.MessageID)
		}
	}
	return ids
}

// AckAll deletes msgs in batches of at most 10 and fails t on any error.
func AckAll(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, msgs ...*sqsloop.Message) {
	t.Helper()
	for start := 0; start < len(msgs); start += sqsloop.MaxBatchSize {
		batch := msgs[start:min(start+sqsloop.MaxBatchSize, len(msgs))]
		handles := make([]string, len(batch))
		for i, m := range batch {
			handles[i] = m.ReceiptHandle
		}
		errs, err := mb.Delete(ctx, handles)
		mustAllOK(t, "Delete", errs, err, len(batch))
	}
}

// mustAllOK fails t unless a batch call and every one of its n entries
// succeeded.
func mustAllOK(t testing.TB, op string, errs []error, err error, n int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	if len(errs) != n {
		t.Fatalf("%s returned %d entry results for %d entries", op, len(errs), n)
	}
	for i, e := range errs {
		if e != nil {
			t.Fatalf("%s entry %d: %v", op, i, e)
		}
	}
}

// oneEntry returns the single entry error of a one-entry batch call, or the
// call's own error.
func oneEntry(errs []error, err error) error {
	if err != nil {
		return err
	}
	if len(errs) != 1 {
		return fmt.Errorf("got %d entry results for 1 entry", len(errs))
	}
	return errs[0]
}

// sameRule fails t unless got is want, text and all: the error of one of
// package sqsloop's request rules (ReceiveRequest.Validate, ValidateDelete,
// ValidateChangeVisibility, ValidateSend), which every Mailbox returns
// unchanged, wrapping sqsloop.ErrInvalidArgument.
func sameRule(t testing.TB, what string, got, want error) {
	t.Helper()
	if want == nil || !errors.Is(got, sqsloop.ErrInvalidArgument) || got.Error() != want.Error() {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// sameEntries fails t unless a batch call succeeded as a whole and each of
// its entry errors is the rule's, as sameRule checks: the whole call's
// error err, the entries' errs, and want, the rule's entry errors.
func sameEntries(t testing.TB, what string, errs []error, err error, want []error) {
	t.Helper()
	if err != nil || len(errs) != len(want) {
		t.Fatalf("%s: call %v, %d entry results; want %d entry results", what, err, len(errs), len(want))
	}
	for i := range want {
		sameRule(t, fmt.Sprintf("%s, entry %d", what, i), errs[i], want[i])
	}
}

// maxPolls bounds the long polls a wait of d may take. Each empty long poll
// waits at least a second, so an honest mailbox needs at most d/1s+1 of them;
// the bound keeps a mailbox that returns early from spinning forever (in a
// synctest bubble, a poll that never blocks never lets the clock move).
func maxPolls(d time.Duration) int { return 2*int(d/time.Second) + 2 }

// pollWait is the long poll that waits out the time left until deadline:
// rounded up to whole seconds (sqsloop.WholeSeconds), at most 20 s (SQS's
// longest long poll), and not above 0 once deadline has passed.
func pollWait(deadline time.Time) time.Duration {
	return min(sqsloop.WholeSeconds(time.Until(deadline)), sqsloop.MaxWaitTime)
}

// describe lists messages by ID, body (its first 64 characters) and receive
// count, for failure output.
func describe(msgs []*sqsloop.Message) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = fmt.Sprintf("{id=%s body=%.64q count=%d}", m.ID, m.Body, m.ReceiveCount)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// ack deletes m through mb, as the lease owner does, and returns the call's
// error or the entry's.
func ack(ctx context.Context, mb sqsloop.Mailbox, m *sqsloop.Message) error {
	return oneEntry(mb.Delete(ctx, []string{m.ReceiptHandle}))
}

// change sets m's visibility timeout through mb, counted from now (0 is a
// nack), and returns the call's error or the entry's.
func change(ctx context.Context, mb sqsloop.Mailbox, m *sqsloop.Message, d time.Duration) error {
	return oneEntry(mb.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: m.ReceiptHandle, Timeout: d}}))
}
