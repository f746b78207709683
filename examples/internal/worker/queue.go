package worker

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// Mailbox is what the job needs of a queue's mailbox: memmailbox,
// sqsmailbox and sqlmailbox all read their queue's attributes and open its
// dead-letter queue.
type Mailbox interface {
	sqsloop.Mailbox
	sqsloop.AttributesReader
	sqsloop.DeadLetterQueueOpener
}

// Queue is where the jobs live, in memory, on SQS or in a database: the
// mailbox the consumer reads, its dead-letter queue, and the counts when it
// was opened, which the progress lines and the summary count from. Close
// it when the run is over.
type Queue struct {
	mb        Mailbox
	dlq       sqsloop.Mailbox // nil without a redrive policy
	url       string          // the SQS queue's URL; "" in memory and in a database
	exact     bool            // counts are exact (memory, database), not approximate (SQS)
	atStart   sqsloop.QueueAttributes
	dlqBefore int    // messages in the dead-letter queue when the run began
	release   func() // closes what opened mb
}

// NewQueue reads mb's attributes and opens its dead-letter queue, if it
// has one, counting what both hold now. url is the SQS queue's URL ("" in
// memory or in a database); exact says whether mb's counts are exact
// (approximate on SQS); release closes what opened mb, and is called on
// error too.
func NewQueue(ctx context.Context, mb Mailbox, url string, exact bool, release func()) (*Queue, error) {
	q := &Queue{mb: mb, url: url, exact: exact, release: release}
	if err := q.start(ctx); err != nil {
		q.Close()
		return nil, err
	}
	return q, nil
}

func (q *Queue) start(ctx context.Context) error {
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

// Close closes the queue's mailboxes and what opened them.
func (q *Queue) Close() {
	if q.dlq != nil {
		q.dlq.Close()
	}
	q.release()
}

// URL is the SQS queue's URL; "" in memory and in a database.
func (q *Queue) URL() string { return q.url }

// Name is the queue's name: the last segment of its URL on SQS, else
// QueueName.
func (q *Queue) Name() string {
	if q.url == "" {
		return QueueName
	}
	return path.Base(q.url)
}

// Waiting counts the messages that were not done when the queue was
// opened (visible, in flight or delayed; on SQS approximate).
func (q *Queue) Waiting() int { return waiting(q.atStart) }

// backlog counts the messages visible, in flight or delayed (on SQS:
// approximate).
func (q *Queue) backlog(ctx context.Context) (int, error) {
	a, err := q.mb.QueueAttributes(ctx)
	return waiting(a), err
}

// deadLettered counts the messages this run added to the dead-letter
// queue, by the redrive policy and as poison messages (on SQS:
// approximate).
func (q *Queue) deadLettered(ctx context.Context) (int, error) {
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

// OpenMemory opens the job's queue in memory: a memmailbox queue with a
// dead-letter queue.
func OpenMemory(ctx context.Context) (*Queue, error) {
	b := new(memmailbox.Broker)
	q, err := b.CreateQueue(Spec(QueueName))
	if err != nil {
		b.Close()
		return nil, err
	}
	return NewQueue(ctx, q, "", true, func() { b.Close() })
}
