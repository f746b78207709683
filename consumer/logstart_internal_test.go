package consumer

import (
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// named and located stand for a database mailbox (Name) and an SQS one
// (QueueURL); the embedded nil Mailbox is never called.
type named struct{ sqsloop.Mailbox }

func (named) Name() string { return "jobs" }

type located struct{ sqsloop.Mailbox }

func (located) QueueURL() string { return "https://sqs.eu-west-1.amazonaws.com/123456789012/jobs" }

// The start line names the queue, not the mailbox's Go type, whenever the
// mailbox can say it (sqlmailbox logged "*sqlmailbox.Mailbox", memmailbox
// "*memmailbox.Queue").
func TestQueueNameInTheStartLine(t *testing.T) {
	for _, c := range []struct {
		mb   sqsloop.Mailbox
		want string
	}{
		{named{}, "jobs"},
		{located{}, "https://sqs.eu-west-1.amazonaws.com/123456789012/jobs"},
		{new(memmailbox.Broker).Queue("jobs"), "jobs"},
		{struct{ sqsloop.Mailbox }{}, "struct { sqsloop.Mailbox }"},
	} {
		if got := queueName(c.mb); got != c.want {
			t.Errorf("queueName(%T) = %q, want %q", c.mb, got, c.want)
		}
	}
}
