package memmailbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
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

// memmailbox counts every duration in whole seconds, rounded up, as SQS does
// (sqsloop.WholeSeconds): a visibility timeout, a visibility change, a delay
// (the message's and the queue's) and a long poll.
func TestDurationsCountWholeSeconds(t *testing.T) {
	t.Run("visibility timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
			send(t, q, bodies("a")...)
			m := receive(t, q, 1, 1500*time.Millisecond)
			if len(m) != 1 {
				t.Fatalf("received %d messages, want 1", len(m))
			}
			if m[0].VisibilityTimeout != 2*time.Second {
				t.Errorf("Message.VisibilityTimeout = %v, want 2s", m[0].VisibilityTimeout)
			}
			time.Sleep(2*time.Second - time.Nanosecond)
			if got := receive(t, q, 1, time.Minute); len(got) != 0 {
				t.Fatal("visible again before 2 s")
			}
			time.Sleep(time.Nanosecond)
			if got := receive(t, q, 1, time.Minute); len(got) != 1 {
				t.Fatal("hidden after 2 s")
			}
		})
	})
	t.Run("visibility change", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
			send(t, q, bodies("a")...)
			m := receive(t, q, 1, time.Minute)
			if err := change(q, m[0], time.Nanosecond); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second - time.Nanosecond)
			if got := receive(t, q, 1, time.Minute); len(got) != 0 {
				t.Fatal("a 1 ns visibility change hid the message less than 1 s")
			}
			time.Sleep(time.Nanosecond)
			if got := receive(t, q, 1, time.Minute); len(got) != 1 {
				t.Fatal("a 1 ns visibility change hid the message more than 1 s")
			}
		})
	})
	t.Run("delay", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, q := newQueue(t, "jobs", memmailbox.QueueConfig{Delay: 100 * time.Millisecond})
			send(t, q, sqsloop.OutgoingMessage{Body: "own", Delay: 1200 * time.Millisecond}, sqsloop.OutgoingMessage{Body: "queue's"})
			if got := q.Stats().Delayed; got != 2 {
				t.Fatalf("Delayed = %d, want 2", got)
			}
			time.Sleep(time.Second - time.Nanosecond)
			wantStats(t, q, 0, 0, 2)
			time.Sleep(time.Nanosecond) // the queue's 100 ms is 1 s
			wantStats(t, q, 1, 0, 1)
			time.Sleep(time.Second - time.Nanosecond)
			wantStats(t, q, 1, 0, 1)
			time.Sleep(time.Nanosecond) // the message's 1.2 s is 2 s
			wantStats(t, q, 2, 0, 0)
			if a, err := q.QueueAttributes(context.Background()); err != nil || a.Delay != time.Second {
				t.Errorf("QueueAttributes().Delay = %v (%v), want 1s", a.Delay, err)
			}
		})
	})
	t.Run("long poll", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
			start := time.Now()
			msgs, err := q.Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 100 * time.Millisecond})
			if err != nil || len(msgs) != 0 {
				t.Fatalf("Receive = %d messages, %v; want none", len(msgs), err)
			}
			if waited := time.Since(start); waited != time.Second {
				t.Errorf("a 100 ms long poll waited %v, want 1s", waited)
			}
		})
	})
}
