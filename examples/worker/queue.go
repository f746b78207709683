package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// Settings of the queue the worker sets up (in memory, with -endpoint, or
// in a database): short leases so extensions show, and a redrive policy so
// the failing job reaches the dead-letter queue.
const (
	queueName       = "jobs"
	maxReceiveCount = 3
)

// mailbox is what the worker needs of a queue's mailbox: memmailbox,
// sqsmailbox and sqlmailbox all read their queue's attributes and open its
// dead-letter queue.
type mailbox interface {
	sqsloop.Mailbox
	sqsloop.AttributesReader
	sqsloop.DeadLetterQueueOpener
}

// queue is where the worker's jobs live, in memory, on SQS or in a
// database: the mailbox the consumer reads, its dead-letter queue, and the
// counts at the start of the run that the monitor and the summary count
// from.
type queue struct {
	mb        mailbox
	dlq       sqsloop.Mailbox // nil without a redrive policy
	url       string          // the SQS queue's URL; "" in memory and in a database
	exact     bool            // counts are exact (memory, database), not approximate (SQS)
	atStart   sqsloop.QueueAttributes
	dlqBefore int    // messages in the dead-letter queue when the run began
	release   func() // closes what opened mb
}

// newQueue reads mb's attributes and opens its dead-letter queue, if it
// has one, counting what both hold now; release closes what opened mb
// (with mb, on error too).
func newQueue(ctx context.Context, mb mailbox, url string, exact bool, release func()) (*queue, error) {
	q := &queue{mb: mb, url: url, exact: exact, release: release}
	if err := q.start(ctx); err != nil {
		q.close()
		return nil, err
	}
	return q, nil
}

func (q *queue) start(ctx context.Context) error {
	var err error
	if q.atStart, err = q.mb.QueueAttributes(ctx); err != nil {
		return err
	}
	dlq, err := q.mb.OpenDeadLetterQueue(ctx)
	switch {
	case errors.Is(err, sqsloop.ErrNoDeadLetterQueue):
		return nil
	case err != nil:
		return err
	}
	q.dlq = dlq
	// It may hold messages of earlier runs: count from here.
	if q.dlqBefore, err = visible(ctx, q.dlq); err != nil {
		return fmt.Errorf("dead-letter queue: %w", err)
	}
	return nil
}

func (q *queue) close() {
	if q.dlq != nil {
		q.dlq.Close()
	}
	q.release()
}

// backlog counts the messages visible, in flight or delayed (on SQS:
// approximate).
func (q *queue) backlog(ctx context.Context) (int, error) {
	a, err := q.mb.QueueAttributes(ctx)
	return waiting(a), err
}

// deadLettered counts the messages this run added to the dead-letter
// queue, by the redrive policy and as poison messages (on SQS:
// approximate).
func (q *queue) deadLettered(ctx context.Context) (int, error) {
	if q.dlq == nil {
		return 0, nil
	}
	n, err := visible(ctx, q.dlq)
	return n - q.dlqBefore, err
}

// waiting counts the messages a queue's attributes say are not done.
func waiting(a sqsloop.QueueAttributes) int {
	return a.ApproximateMessages + a.ApproximateMessagesInFlight + a.ApproximateMessagesDelayed
}

// visible counts the messages of mb that wait to be received.
func visible(ctx context.Context, mb sqsloop.Mailbox) (int, error) {
	a, err := mb.(sqsloop.AttributesReader).QueueAttributes(ctx)
	return a.ApproximateMessages, err
}

// newMemQueue is the embedded default: a memmailbox queue with a DLQ.
func newMemQueue(ctx context.Context) (*queue, error) {
	b := new(memmailbox.Broker)
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: queueName, VisibilityTimeout: lease, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		b.Close()
		return nil, err
	}
	return newQueue(ctx, q, "", true, func() { b.Close() })
}
