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

func TestCreateQueueRejectsBadInput(t *testing.T) {
	b := memmailbox.NewBroker()
	defer b.Close()
	for _, tc := range []struct {
		name  string
		queue string
		cfg   memmailbox.QueueConfig
		words []string
	}{
		{"empty name", "", memmailbox.QueueConfig{}, []string{"queue name", "1–80"}},
		{"long name", strings.Repeat("q", 81), memmailbox.QueueConfig{}, []string{"length 81", "1–80"}},
		{"bad character", "my queue", memmailbox.QueueConfig{}, []string{"' '"}},
		{"dot in standard name", "jobs.fifo", memmailbox.QueueConfig{}, []string{"'.'"}},
		{"FIFO without suffix", "jobs", memmailbox.QueueConfig{FIFO: true}, []string{".fifo"}},
		{"FIFO suffix only", ".fifo", memmailbox.QueueConfig{FIFO: true}, []string{"1–80"}},
		{"visibility timeout negative", "q", memmailbox.QueueConfig{VisibilityTimeout: -time.Second}, []string{"VisibilityTimeout", "0–12h"}},
		{"visibility timeout too long", "q", memmailbox.QueueConfig{VisibilityTimeout: 12*time.Hour + time.Second}, []string{"VisibilityTimeout", "0–12h"}},
		{"delay too long", "q", memmailbox.QueueConfig{Delay: 16 * time.Minute}, []string{"Delay", "0–15m"}},
		{"max receive count too big", "q", memmailbox.QueueConfig{MaxReceiveCount: 1001, DeadLetterQueue: "dlq"}, []string{"MaxReceiveCount", "1–1000"}},
		{"max receive count without DLQ", "q", memmailbox.QueueConfig{MaxReceiveCount: 3}, []string{"DeadLetterQueue", "both"}},
		{"DLQ without max receive count", "q", memmailbox.QueueConfig{DeadLetterQueue: "dlq"}, []string{"MaxReceiveCount", "both"}},
		{"content dedup on standard", "q", memmailbox.QueueConfig{ContentBasedDeduplication: true}, []string{"ContentBasedDeduplication", "FIFO"}},
		{"DLQ does not exist", "q", memmailbox.QueueConfig{MaxReceiveCount: 3, DeadLetterQueue: "nope"}, []string{"DeadLetterQueue", `"nope"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := b.CreateQueue(tc.queue, tc.cfg)
			if q != nil {
				t.Errorf("CreateQueue returned a queue with error %v", err)
			}
			wantErr(t, err, sqsloop.ErrInvalidArgument, tc.words...)
		})
	}
}

func TestValidateJoinsEveryProblem(t *testing.T) {
	err := memmailbox.QueueConfig{VisibilityTimeout: -1, Delay: -1, MaxReceiveCount: -1}.Validate()
	wantErr(t, err, sqsloop.ErrInvalidArgument, "VisibilityTimeout", "Delay", "MaxReceiveCount")
	if err := (memmailbox.QueueConfig{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
}

func TestCreateQueueIsIdempotent(t *testing.T) {
	b := memmailbox.NewBroker()
	defer b.Close()
	q1, err := b.CreateQueue("jobs", memmailbox.QueueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// The default visibility timeout spelled out is the same configuration.
	q2, err := b.CreateQueue("jobs", memmailbox.QueueConfig{VisibilityTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("same config again: %v", err)
	}
	send(t, q1, bodies("hello")...)
	if got := bodiesOf(receive(t, q2, 1, time.Minute)); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("second handle received %q, want the message sent on the first", got)
	}
	_, err = b.CreateQueue("jobs", memmailbox.QueueConfig{Delay: time.Second})
	wantErr(t, err, sqsloop.ErrInvalidArgument, `"jobs"`, "exists with another configuration")
}

func TestCreateQueueDLQRules(t *testing.T) {
	b := memmailbox.NewBroker()
	defer b.Close()
	_, err := b.CreateQueue("jobs", memmailbox.QueueConfig{MaxReceiveCount: 3, DeadLetterQueue: "jobs-dlq"})
	wantErr(t, err, sqsloop.ErrQueueNotFound, "jobs-dlq")
	if _, err := b.CreateQueue("jobs-dlq", memmailbox.QueueConfig{}); err != nil {
		t.Fatal(err)
	}
	_, err = b.CreateQueue("jobs.fifo", memmailbox.QueueConfig{FIFO: true, MaxReceiveCount: 3, DeadLetterQueue: "jobs-dlq"})
	wantErr(t, err, sqsloop.ErrInvalidArgument, "FIFO DLQ")
	q, err := b.CreateQueue("jobs", memmailbox.QueueConfig{MaxReceiveCount: 3, DeadLetterQueue: "jobs-dlq"})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.QueueAttributes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := sqsloop.QueueAttributes{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 3, DeadLetterQueue: "jobs-dlq"}
	if attrs != want {
		t.Errorf("QueueAttributes = %+v, want %+v", attrs, want)
	}
}

func TestMissingQueueBehavesLikeOne(t *testing.T) {
	b := memmailbox.NewBroker()
	defer b.Close()
	q := b.Queue("ghost")
	ctx := context.Background()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, sqsloop.ErrQueueNotFound) || !strings.Contains(err.Error(), `"ghost"`) {
			t.Errorf("%s: %v, want ErrQueueNotFound naming the queue", op, err)
		}
	}
	_, err := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1})
	check("Receive", err)
	_, err = q.Send(ctx, bodies("x"))
	check("Send", err)
	_, err = q.Delete(ctx, []string{"h"})
	check("Delete", err)
	_, err = q.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: "h"}})
	check("ChangeVisibility", err)
	_, err = q.QueueAttributes(ctx)
	check("QueueAttributes", err)
	if st := q.Stats(); st != (memmailbox.Stats{}) {
		t.Errorf("Stats = %+v, want zero", st)
	}
	if err := q.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	_, err = q.Send(ctx, bodies("x"))
	check("Send after Close", err)
}

func TestBrokerCloseClosesEveryHandle(t *testing.T) {
	b, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
	send(t, q, bodies("a", "b")...)
	other := b.Queue("jobs")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	for _, h := range []*memmailbox.Queue{q, other, b.Queue("jobs")} {
		_, err := h.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1})
		wantErr(t, err, sqsloop.ErrMailboxClosed)
		_, err = h.Send(ctx, bodies("c"))
		wantErr(t, err, sqsloop.ErrMailboxClosed)
		_, err = h.Delete(ctx, []string{"h"})
		wantErr(t, err, sqsloop.ErrMailboxClosed)
		_, err = h.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: "h"}})
		wantErr(t, err, sqsloop.ErrMailboxClosed)
	}
	_, err := b.CreateQueue("more", memmailbox.QueueConfig{})
	wantErr(t, err, sqsloop.ErrMailboxClosed)
	// Closing loses nothing: the messages are still counted.
	wantStats(t, q, 2, 0, 0)
}

func TestClosingOneHandleLeavesOthersOpen(t *testing.T) {
	b, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
	other := b.Queue("jobs")
	send(t, q, bodies("a")...)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := q.Send(context.Background(), bodies("b"))
	wantErr(t, err, sqsloop.ErrMailboxClosed, `"jobs"`)
	_, err = q.QueueAttributes(context.Background())
	wantErr(t, err, sqsloop.ErrMailboxClosed)
	if got := bodiesOf(receive(t, other, 10, time.Minute)); len(got) != 1 || got[0] != "a" {
		t.Fatalf("other handle received %q, want [a]", got)
	}
}

func TestCanceledContextFailsEveryCall(t *testing.T) {
	_, q := newQueue(t, "jobs", memmailbox.QueueConfig{})
	send(t, q, bodies("a")...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1})
	wantErr(t, err, context.Canceled)
	_, err = q.Send(ctx, bodies("b"))
	wantErr(t, err, context.Canceled)
	_, err = q.Delete(ctx, []string{"h"})
	wantErr(t, err, context.Canceled)
	_, err = q.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: "h"}})
	wantErr(t, err, context.Canceled)
	_, err = q.QueueAttributes(ctx)
	wantErr(t, err, context.Canceled)
	st := wantStats(t, q, 1, 0, 0)
	if st.Sent != 1 {
		t.Errorf("Sent = %d, want 1", st.Sent)
	}
}

func TestMissingQueueHandleStaysMissing(t *testing.T) {
	b := memmailbox.NewBroker()
	defer b.Close()
	early := b.Queue("late")
	if _, err := b.CreateQueue("late", memmailbox.QueueConfig{}); err != nil {
		t.Fatal(err)
	}
	_, err := early.Send(context.Background(), bodies("x"))
	wantErr(t, err, sqsloop.ErrQueueNotFound, `"late"`)
	send(t, b.Queue("late"), bodies("x")...)
}

func TestQueueAttributesAfterBrokerClose(t *testing.T) {
	b := memmailbox.NewBroker()
	q, err := b.CreateQueue("attrs", memmailbox.QueueConfig{})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := q.QueueAttributes(context.Background()); !errors.Is(err, sqsloop.ErrMailboxClosed) {
		t.Fatalf("QueueAttributes after Broker.Close = %v, want ErrMailboxClosed", err)
	}
}
