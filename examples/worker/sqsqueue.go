package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// sqsQueue is a real SQS queue (or an SQS-compatible server's): the one
// -queue-url names, or the one -queue names, set up on -endpoint with its
// dead-letter queue. The dead-letter queue is found through the redrive
// policy.
type sqsQueue struct {
	mb        *sqsmailbox.Mailbox
	dlq       sqsloop.Mailbox // nil without a redrive policy
	dlqBefore int             // messages in the dead-letter queue when the run began
}

// newSQSQueue opens the queue at url on endpoint ("" for AWS), or, without
// a url, sets up the queue name there with sqsmailbox.CreateQueue: 2 s
// leases, and a dead-letter queue name-dlq after maxReceiveCount receives.
func newSQSQueue(ctx context.Context, endpoint, url, name string) (*sqsQueue, error) {
	client, err := sqsmailbox.NewClient(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	var mb *sqsmailbox.Mailbox
	if url != "" {
		mb, err = sqsmailbox.New(client, url)
	} else {
		mb, err = sqsmailbox.CreateQueue(ctx, client, sqsloop.QueueSpec{Name: name, VisibilityTimeout: lease, MaxReceiveCount: maxReceiveCount})
	}
	if err != nil {
		return nil, err
	}
	q := &sqsQueue{mb: mb}
	q.dlq, err = mb.OpenDeadLetterQueue(ctx)
	switch {
	case errors.Is(err, sqsloop.ErrNoDeadLetterQueue):
	case err != nil:
		return nil, err
	default:
		// It may hold messages of earlier runs: count from here.
		a, err := q.dlq.(sqsloop.AttributesReader).QueueAttributes(ctx)
		if err != nil {
			return nil, fmt.Errorf("dead-letter queue: %w", err)
		}
		q.dlqBefore = a.ApproximateMessages
	}
	return q, nil
}

func (q *sqsQueue) mailbox() sqsloop.Mailbox { return q.mb }
func (q *sqsQueue) exact() bool              { return false }

func (q *sqsQueue) close() {
	q.mb.Close()
	if q.dlq != nil {
		q.dlq.Close()
	}
}

func (q *sqsQueue) backlog(ctx context.Context) (int, error) {
	a, err := q.mb.QueueAttributes(ctx)
	return a.ApproximateMessages + a.ApproximateMessagesInFlight + a.ApproximateMessagesDelayed, err
}

func (q *sqsQueue) deadLettered(ctx context.Context) (int, error) {
	if q.dlq == nil {
		return 0, nil
	}
	a, err := q.dlq.(sqsloop.AttributesReader).QueueAttributes(ctx)
	return a.ApproximateMessages - q.dlqBefore, err
}
