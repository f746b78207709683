package memmailbox_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// mem://NAME opens one queue of the process, created at its first open
// with the URL's parameters: a producer and a consumer that open the same
// URL share it; a later open with other parameters is refused.
func TestOpenMailboxMem(t *testing.T) {
	producer, err := sqsloop.OpenMailbox(t.Context(), "mem://url-jobs?max_receive_count=3&visibility_timeout=45s")
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	consumer, err := sqsloop.OpenMailbox(t.Context(), "mem://url-jobs?max_receive_count=3&visibility_timeout=45s")
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	if _, err := producer.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "job"}}); err != nil {
		t.Fatal(err)
	}
	msgs, err := consumer.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1})
	if err != nil || len(msgs) != 1 || msgs[0].Body != "job" {
		t.Fatalf("Receive = %v, %v; want the job sent through the other handle", msgs, err)
	}
	a, err := consumer.(sqsloop.AttributesReader).QueueAttributes(t.Context())
	if err != nil || a.MaxReceiveCount != 3 || a.DeadLetterQueue != "url-jobs-dlq" || a.VisibilityTimeout != 45*time.Second ||
		consumer.(*memmailbox.Queue).Name() != "url-jobs" {
		t.Errorf("attributes %+v, %v; want a 45 s visibility timeout and a redrive policy to url-jobs-dlq after 3 receives", a, err)
	}
	if _, err := sqsloop.OpenMailbox(t.Context(), "mem://url-jobs"); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("opening url-jobs without its redrive policy: %v, want the attributes that differ", err)
	}
	fifo, err := sqsloop.OpenMailbox(t.Context(), "mem://url-jobs.fifo")
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	if a, err := fifo.(sqsloop.AttributesReader).QueueAttributes(t.Context()); err != nil || !a.FIFO {
		t.Errorf("mem://url-jobs.fifo: %+v, %v; want a FIFO queue", a, err)
	}
}

func TestOpenMailboxMemErrors(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"mem://jobs?max_receive=3", `unknown parameter "max_receive"`},
		{"mem://jobs?visibility_timeout=30", "visibility_timeout=30: want a duration"},
		{"mem://jobs?max_receive_count=many", "max_receive_count=many: want a whole number"},
		{"mem:///jobs", "want mem://NAME"},
		{"mem://jobs?max_receive_count=5000", "MaxReceiveCount"},
	} {
		_, err := sqsloop.OpenMailbox(t.Context(), tc.url)
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenMailbox(%q) = %v; want ErrInvalidArgument saying %s", tc.url, err, tc.want)
		}
	}
}
