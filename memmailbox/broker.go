package memmailbox

import (
	"errors"
	"fmt"
	"sync"

	"github.com/sqsloop/sqsloop"
)

// Broker holds named queues in memory, like one SQS account and region. The
// zero value is not usable; call NewBroker. Safe for concurrent use.
type Broker struct {
	mu     sync.Mutex
	queues map[string]*queueState
	closed bool
}

// NewBroker returns an empty Broker.
func NewBroker() *Broker {
	return &Broker{queues: make(map[string]*queueState)}
}

// CreateQueue creates the queue name with cfg and returns a handle to it. Like
// SQS's CreateQueue it is idempotent: for an existing queue with the same
// configuration (after defaults) it returns a new handle to that queue.
//
// Errors wrap sqsloop.ErrInvalidArgument and name the field and its range
// when name or cfg is invalid (see QueueConfig.Validate; a name is 1–80
// letters, digits, '-' and '_', and a FIFO queue's ends in ".fifo"), and
// when name exists with a different configuration (SQS:
// QueueAlreadyExists); they also wrap sqsloop.ErrQueueNotFound when
// cfg.DeadLetterQueue does not exist. After Close, the error wraps
// sqsloop.ErrMailboxClosed.
func (b *Broker) CreateQueue(name string, cfg QueueConfig) (*Queue, error) {
	if err := errors.Join(validateQueueName(name, cfg.FIFO), cfg.Validate()); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("memmailbox: CreateQueue %q: broker closed: %w", name, sqsloop.ErrMailboxClosed)
	}
	if s, ok := b.queues[name]; ok {
		if s.cfg != cfg {
			return nil, fmt.Errorf("memmailbox: CreateQueue %q: the queue exists with another configuration: have %+v, asked for %+v: %w",
				name, s.cfg, cfg, sqsloop.ErrInvalidArgument)
		}
		return newQueue(name, s), nil
	}
	var dlq *queueState
	if cfg.DeadLetterQueue != "" {
		dlq = b.queues[cfg.DeadLetterQueue]
		if dlq == nil {
			return nil, fmt.Errorf("memmailbox: CreateQueue %q: QueueConfig.DeadLetterQueue %q: no such queue (create the DLQ first): %w: %w",
				name, cfg.DeadLetterQueue, sqsloop.ErrInvalidArgument, sqsloop.ErrQueueNotFound)
		}
		if dlq.cfg.FIFO != cfg.FIFO {
			return nil, fmt.Errorf("memmailbox: CreateQueue %q: QueueConfig.DeadLetterQueue %q: a FIFO queue needs a FIFO DLQ and a standard queue a standard one: %w",
				name, cfg.DeadLetterQueue, sqsloop.ErrInvalidArgument)
		}
	}
	s := newQueueState(name, cfg, dlq)
	b.queues[name] = s
	return newQueue(name, s), nil
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
