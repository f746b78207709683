package main

import (
	"context"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// queue is where the worker's jobs live: the mailbox the consumer reads,
// and the counts the monitor watches.
type queue interface {
	mailbox() sqsloop.Mailbox
	// backlog counts the messages visible, in flight or delayed (on SQS:
	// approximate).
	backlog(ctx context.Context) (int, error)
	// deadLettered counts the messages this run added to the dead-letter
	// queue, by the redrive policy and as poison messages (on SQS:
	// approximate).
	deadLettered(ctx context.Context) (int, error)
	// exact reports whether backlog is exact (in memory) or approximate (SQS).
	exact() bool
	close()
}

// Settings of the queue the worker sets up (in memory, or with -endpoint):
// short leases so extensions show, and a redrive policy so the failing job
// reaches the dead-letter queue.
const (
	queueName       = "jobs"
	dlqName         = "jobs-dlq"
	maxReceiveCount = 3
)

// memQueue is the embedded default: a memmailbox queue with a DLQ.
type memQueue struct {
	broker *memmailbox.Broker
	q, dlq *memmailbox.Queue
}

func newMemQueue() (*memQueue, error) {
	b := memmailbox.NewBroker()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: queueName, VisibilityTimeout: lease, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		b.Close()
		return nil, err
	}
	return &memQueue{broker: b, q: q, dlq: b.Queue(dlqName)}, nil
}

func (m *memQueue) mailbox() sqsloop.Mailbox { return m.q }
func (m *memQueue) exact() bool              { return true }
func (m *memQueue) close()                   { m.broker.Close() }

func (m *memQueue) backlog(context.Context) (int, error) {
	st := m.q.Stats()
	return st.Visible + st.InFlight + st.Delayed, nil
}

func (m *memQueue) deadLettered(context.Context) (int, error) { return m.dlq.Stats().Visible, nil }

// inFlight is what the drain must leave at 0: exact in memory only.
func (m *memQueue) inFlight() int { return m.q.Stats().InFlight }
