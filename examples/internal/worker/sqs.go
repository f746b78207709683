package worker

import (
	"context"
	"flag"
	"fmt"
	"net/url"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// SQS are the flags of a program that runs the job on an SQS queue as well
// as in memory.
type SQS struct {
	QueueURL string // consume this queue; "": the one Queue names on Endpoint, or memory
	Endpoint string // an SQS-compatible server's base URL; "": AWS
	Queue    string // with Endpoint and no QueueURL: the queue to set up there
	Send     bool   // enqueue the jobs into QueueURL first
}

// Flags defines the flags of s on fs, with their defaults.
func (s *SQS) Flags(fs *flag.FlagSet) {
	fs.StringVar(&s.QueueURL, "queue-url", "", "consume this SQS queue (its URL, or sqs://NAME) instead of the in-memory one (AWS credentials from the environment; the region is the URL's)")
	fs.StringVar(&s.Endpoint, "endpoint", "", "base URL of an SQS-compatible server (LocalStack, ElasticMQ, fauxqs); empty: AWS. Without -queue-url: set up -queue there and use it")
	fs.StringVar(&s.Queue, "queue", QueueName, "with -endpoint and no -queue-url: the queue to set up (with its dead-letter queue, NAME-dlq) and enqueue the jobs in")
	fs.BoolVar(&s.Send, "send", false, "with -queue-url: enqueue the jobs of -dir first")
}

// Open opens the queue s names: in memory without -queue-url and
// -endpoint; the queue at -queue-url; or the one -queue names, set up on
// -endpoint.
func (s SQS) Open(ctx context.Context) (*Queue, error) {
	if s.QueueURL == "" && s.Endpoint == "" {
		return OpenMemory(ctx)
	}
	var mb *sqsmailbox.Mailbox
	if s.QueueURL != "" {
		u, err := url.Parse(s.QueueURL) // a queue URL, or sqs://NAME: sqsloop.OpenMailbox
		if err != nil {
			return nil, fmt.Errorf("-queue-url: %w", err)
		}
		if s.Endpoint != "" {
			q := u.Query()
			q.Set("endpoint", s.Endpoint)
			u.RawQuery = q.Encode()
		}
		opened, err := sqsloop.OpenMailbox(ctx, u.String())
		if err != nil {
			return nil, err
		}
		if mb, _ = opened.(*sqsmailbox.Mailbox); mb == nil {
			opened.Close()
			return nil, fmt.Errorf("-queue-url %s: not an SQS queue", s.QueueURL)
		}
	} else {
		client, err := sqsmailbox.NewClient(ctx, s.Endpoint)
		if err != nil {
			return nil, err
		}
		// 2 s leases and a dead-letter queue NAME-dlq after MaxReceiveCount
		// receives; the dead-letter queue is found through the redrive
		// policy.
		if mb, err = sqsmailbox.CreateQueue(ctx, client, Spec(s.Queue)); err != nil {
			return nil, err
		}
	}
	return NewQueue(ctx, mb, mb.QueueURL(), false, func() { mb.Close() })
}

// Enqueue reports whether a run enqueues the jobs: in memory and on a queue
// it set up always, on -queue-url with -send.
func (s SQS) Enqueue() bool { return s.QueueURL == "" || s.Send }
