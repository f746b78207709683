package memmailbox

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
)

// deduplicationInterval is how long a FIFO queue remembers a deduplication
// ID: a send with the same ID within 5 minutes is accepted but not enqueued
// again (SQS's deduplication interval).
const deduplicationInterval = 5 * time.Minute

// Broker holds named queues in memory, like one SQS account and region. The
// zero value is an empty Broker, ready to use: new(memmailbox.Broker).
// Safe for concurrent use; a Broker must not be copied after first use.
type Broker struct {
	mu     sync.Mutex
	queues map[string]*queueState
	closed bool
}

// CreateQueue sets up the queue spec describes and returns a handle to it:
// with spec.MaxReceiveCount above 0, first its dead-letter queue
// (spec.DeadLetterSpec(): named spec.DeadLetterQueueName(), the same type,
// 14 days' retention) and a redrive policy to it. Like SQS's CreateQueue
// it is idempotent: a queue (or dead-letter queue) that exists with the
// attributes spec gives it (zero fields meaning their defaults) is reused,
// its messages kept, and a new handle returned. The DLQ is reachable with
// Queue.OpenDeadLetterQueue or Broker.Queue(spec.DeadLetterQueueName()).
//
// Errors: spec.Validate's (wrapping sqsloop.ErrInvalidArgument, naming each
// field and its range); with spec.Priority, an error wrapping
// sqsloop.ErrInvalidArgument that names it (memmailbox has no priorities,
// as SQS has none); spec.Match's when the queue or its dead-letter queue
// exists with other attributes (wrapping sqsloop.ErrInvalidArgument, naming
// each attribute that differs; SQS: QueueAlreadyExists); after Close, an
// error wrapping sqsloop.ErrMailboxClosed. Nothing is created on an error
// but a dead-letter queue made before the queue's own problem was found, as
// on SQS.
func (b *Broker) CreateQueue(spec sqsloop.QueueSpec) (*Queue, error) {
	if err := errors.Join(spec.Validate(), refusePriority(spec)); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("memmailbox: CreateQueue %q: broker closed: %w", spec.Name, sqsloop.ErrMailboxClosed)
	}
	var dlq *queueState
	if spec.MaxReceiveCount > 0 {
		var err error
		if dlq, err = b.create(spec.DeadLetterSpec(), nil); err != nil {
			return nil, err
		}
	}
	s, err := b.create(spec, dlq)
	if err != nil {
		return nil, err
	}
	return newQueue(spec.Name, s), nil
}

// create returns the queue spec names, made with dlq as its dead-letter
// queue unless it exists with spec's attributes. b.mu is held.
func (b *Broker) create(spec sqsloop.QueueSpec, dlq *queueState) (*queueState, error) {
	if s, ok := b.queues[spec.Name]; ok {
		if err := spec.Match(s.attributes()); err != nil {
			return nil, fmt.Errorf("memmailbox: CreateQueue: %w", err)
		}
		return s, nil
	}
	s := newQueueState(spec.WithDefaults(), dlq)
	if b.queues == nil {
		b.queues = make(map[string]*queueState) // the zero Broker's first queue
	}
	b.queues[spec.Name] = s
	return s, nil
}

// Queue returns a new handle to the queue name. For a queue that does not
// exist it still returns a handle, whose every call fails with an error
// wrapping sqsloop.ErrQueueNotFound that names the queue (as SQS does for a
// queue URL that leads nowhere).
func (b *Broker) Queue(name string) *Queue {
	b.mu.Lock()
	defer b.mu.Unlock()
	return newQueue(name, b.queues[name])
}

// Close closes every queue: long polls return sqsloop.ErrMailboxClosed at
// once, and so does every later call on any handle, and CreateQueue. Stats
// still works. Close is idempotent and returns nil.
func (b *Broker) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, s := range b.queues {
		s.close()
	}
	return nil
}

// refusePriority returns the error of a spec asking for priorities, which
// memmailbox does not keep, as SQS does not: a program counting on them is
// told at setup rather than served in another order.
func refusePriority(spec sqsloop.QueueSpec) error {
	if !spec.Priority {
		return nil
	}
	return fmt.Errorf("memmailbox: CreateQueue %q: QueueSpec.Priority: must be false on memmailbox, which has no priorities (SQS has none; sqlmailbox keeps them), got true: %w",
		spec.Name, sqsloop.ErrInvalidArgument)
}
