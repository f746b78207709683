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

func TestCreateQueueRejectsBadInput(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	for _, spec := range []sqsloop.QueueSpec{
		{},
		{Name: "my queue"},
		{Name: "jobs", FIFO: true},
		{Name: "q", VisibilityTimeout: 12*time.Hour + time.Second, Delay: 16 * time.Minute, MaxReceiveCount: 1001},
	} {
		q, err := b.CreateQueue(spec)
		if q != nil {
			t.Errorf("CreateQueue(%+v) returned a queue with error %v", spec, err)
		}
		// The spec's own rules, with their text: the same as sqsmailbox's.
		if want := spec.Validate(); err == nil || err.Error() != want.Error() {
			t.Errorf("CreateQueue(%+v) = %v, want QueueSpec.Validate's error %v", spec, err, want)
		}
		wantErr(t, err, sqsloop.ErrInvalidArgument, "QueueSpec.")
	}
}

func TestCreateQueueIsIdempotent(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	q1, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	// The defaults spelled out are the same attributes.
	q2, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3, VisibilityTimeout: 30 * time.Second,
		RetentionPeriod: 4 * 24 * time.Hour, MaxMessageSize: 1 << 20})
	if err != nil {
		t.Fatalf("same spec again: %v", err)
	}
	send(t, q1, bodies("hello")...)
	if got := bodiesOf(receive(t, q2, 1, time.Minute)); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("second handle received %q, want the message sent on the first", got)
	}
	_, err = b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3, Delay: time.Second})
	wantErr(t, err, sqsloop.ErrInvalidArgument, `"jobs" exists with other attributes`, "Delay is 0s, the spec asks for 1s")
	// A dead-letter queue made by hand with other attributes is refused too.
	if _, err := b.CreateQueue(sqsloop.QueueSpec{Name: "other-dlq"}); err != nil {
		t.Fatal(err)
	}
	_, err = b.CreateQueue(sqsloop.QueueSpec{Name: "other", MaxReceiveCount: 2})
	wantErr(t, err, sqsloop.ErrInvalidArgument, `"other-dlq" exists with other attributes`, "RetentionPeriod is 96h0m0s")
}

func TestCreateQueueWithDeadLetterQueue(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	ctx := context.Background()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs.fifo", FIFO: true, VisibilityTimeout: time.Minute, MaxMessageSize: 2048, MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.QueueAttributes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := sqsloop.QueueAttributes{VisibilityTimeout: time.Minute, RetentionPeriod: 4 * 24 * time.Hour, MaxMessageSize: 2048,
		MaxReceiveCount: 3, DeadLetterQueue: "jobs-dlq.fifo", FIFO: true}
	if attrs != want {
		t.Errorf("QueueAttributes = %+v, want %+v", attrs, want)
	}
	mb, err := q.OpenDeadLetterQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dlq := mb.(*memmailbox.Queue)
	attrs, err = dlq.QueueAttributes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want = sqsloop.QueueAttributes{VisibilityTimeout: 30 * time.Second, RetentionPeriod: 14 * 24 * time.Hour, MaxMessageSize: 2048, FIFO: true}
	if attrs != want {
		t.Errorf("DLQ's QueueAttributes = %+v, want %+v", attrs, want)
	}
	_, err = dlq.OpenDeadLetterQueue(ctx)
	wantErr(t, err, sqsloop.ErrNoDeadLetterQueue, `"jobs-dlq.fifo"`)
	if err := dlq.Close(); err != nil {
		t.Fatal(err)
	}
	// Closing the DLQ's handle leaves the queue's open, and the other way round.
	send(t, q, sqsloop.OutgoingMessage{Body: "x", MessageGroupID: "g", DeduplicationID: "1"})
	_, err = dlq.OpenDeadLetterQueue(ctx)
	wantErr(t, err, sqsloop.ErrMailboxClosed)
}

func TestQueueAttributesCountTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		ctx := context.Background()
		send(t, q, bodies("a", "b", "c", "d")...)
		send(t, q, sqsloop.OutgoingMessage{Body: "later", Delay: time.Minute})
		receive(t, q, 1, 10*time.Second)
		count := func() [3]int {
			a, err := q.QueueAttributes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return [3]int{a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed}
		}
		if got, want := count(), [3]int{3, 1, 1}; got != want {
			t.Errorf("visible, in flight, delayed = %v, want %v", got, want)
		}
		time.Sleep(time.Minute) // the lease lapses, the delay ends
		if got, want := count(), [3]int{5, 0, 0}; got != want {
			t.Errorf("a minute later: visible, in flight, delayed = %v, want %v", got, want)
		}
	})
}

func TestQueueMaxMessageSize(t *testing.T) {
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "small", MaxMessageSize: 1024})
	res, err := q.Send(context.Background(), []sqsloop.OutgoingMessage{
		{Body: strings.Repeat("x", 1024)},
		{Body: strings.Repeat("x", 1020), MessageAttributes: map[string]sqsloop.MessageAttribute{"a": {DataType: "String", StringValue: "b"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil {
		t.Errorf("a message of 1024 bytes on a queue of 1024: %v", res[0].Err)
	}
	wantErr(t, res[1].Err, sqsloop.ErrInvalidArgument, "msgs[1]", "at most 1024 bytes", `"small"`, "got 1028")
}

func TestMissingQueueBehavesLikeOne(t *testing.T) {
	b := new(memmailbox.Broker)
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
	b, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
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
	_, err := b.CreateQueue(sqsloop.QueueSpec{Name: "more"})
	wantErr(t, err, sqsloop.ErrMailboxClosed)
	// Closing loses nothing: the messages are still counted.
	wantStats(t, q, 2, 0, 0)
}

func TestClosingOneHandleLeavesOthersOpen(t *testing.T) {
	b, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
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
	_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
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
	b := new(memmailbox.Broker)
	defer b.Close()
	early := b.Queue("late")
	if _, err := b.CreateQueue(sqsloop.QueueSpec{Name: "late"}); err != nil {
		t.Fatal(err)
	}
	_, err := early.Send(context.Background(), bodies("x"))
	wantErr(t, err, sqsloop.ErrQueueNotFound, `"late"`)
	send(t, b.Queue("late"), bodies("x")...)
}

func TestQueueAttributesAfterBrokerClose(t *testing.T) {
	b := new(memmailbox.Broker)
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "attrs"})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := q.QueueAttributes(context.Background()); !errors.Is(err, sqsloop.ErrMailboxClosed) {
		t.Fatalf("QueueAttributes after Broker.Close = %v, want ErrMailboxClosed", err)
	}
}

// The zero Broker is an empty one, ready to use: CreateQueue, Queue, Close
// (a zero Broker used to panic: assignment to entry in nil map).
func TestZeroBrokerIsUsable(t *testing.T) {
	var b memmailbox.Broker
	if _, err := b.Queue("jobs").Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: 1}); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("a queue of the zero Broker before CreateQueue: %v, want ErrQueueNotFound", err)
	}
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	send(t, q, bodies("hello")...)
	if got := bodiesOf(receive(t, b.Queue("jobs"), 1, time.Minute)); len(got) != 1 || got[0] != "hello" {
		t.Errorf("received %q, want hello", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateQueue(sqsloop.QueueSpec{Name: "other"}); !errors.Is(err, sqsloop.ErrMailboxClosed) {
		t.Errorf("CreateQueue after Close = %v, want ErrMailboxClosed", err)
	}
}
