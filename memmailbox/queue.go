package memmailbox

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Queue is a handle to one queue of a Broker, the way an SQS client with a
// queue URL is: it implements sqsloop.Mailbox, sqsloop.AttributesReader and
// sqsloop.DeadLetterQueueOpener.
// Several handles may share a queue; closing one closes that handle only
// (Broker.Close closes them all). A handle to a queue that did not exist when
// Broker.Queue was called fails every call with sqsloop.ErrQueueNotFound,
// even if the queue is created later: call Broker.Queue again.
//
// All methods are safe for concurrent use. A message is in flight to at most
// one receiver at a time.
type Queue struct {
	name      string
	s         *queueState // nil: the queue does not exist
	closed    atomic.Bool
	done      chan struct{}
	closeOnce sync.Once
}

var (
	_ sqsloop.Mailbox               = (*Queue)(nil)
	_ sqsloop.AttributesReader      = (*Queue)(nil)
	_ sqsloop.DeadLetterQueueOpener = (*Queue)(nil)
)

func newQueue(name string, s *queueState) *Queue {
	return &Queue{name: name, s: s, done: make(chan struct{})}
}

// Name is the queue's name, as CreateQueue's spec or Broker.Queue gave it
// (the consumer's logs name the queue by it).
func (q *Queue) Name() string { return q.name }

// state returns the queue, or an error wrapping sqsloop.ErrQueueNotFound or
// sqsloop.ErrMailboxClosed (for this handle; the caller checks the queue's
// own closed flag under its lock).
func (q *Queue) state() (*queueState, error) {
	if q.s == nil {
		return nil, fmt.Errorf("memmailbox: queue %q: %w", q.name, sqsloop.ErrQueueNotFound)
	}
	if q.closed.Load() {
		return nil, q.errClosed()
	}
	return q.s, nil
}

// lock locks s, the queue behind q, and fails with ErrMailboxClosed if the
// queue or this handle is closed. On error s is left unlocked.
func (q *Queue) lock(s *queueState) error {
	s.mu.Lock()
	if s.closed || q.closed.Load() {
		s.mu.Unlock()
		return q.errClosed()
	}
	return nil
}

func (q *Queue) errClosed() error {
	return fmt.Errorf("memmailbox: queue %q: %w", q.name, sqsloop.ErrMailboxClosed)
}

// Close closes this handle: a Receive waiting in a long poll returns an error
// wrapping sqsloop.ErrMailboxClosed at once, and so does every later call on
// this handle. The queue and its messages stay in the Broker, reachable by
// other handles (messages in flight stay in flight until their visibility
// timeout ends). Close is idempotent and always returns nil.
func (q *Queue) Close() error {
	q.closeOnce.Do(func() {
		q.closed.Store(true)
		close(q.done)
	})
	return nil
}

// QueueAttributes reports the queue's configuration, as CreateQueue's
// spec set it up with its defaults applied (VisibilityTimeout, Delay,
// RetentionPeriod, MaxMessageSize, MaxReceiveCount, DeadLetterQueue by
// name, FIFO, ContentBasedDeduplication), and its depth now, after
// sweeping what is due: ApproximateMessages (visible, as Stats.Visible),
// ApproximateMessagesInFlight and ApproximateMessagesDelayed, exact here.
// Errors wrap sqsloop.ErrQueueNotFound or sqsloop.ErrMailboxClosed, or are
// ctx's error when ctx is done.
func (q *Queue) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	s, err := q.state()
	if err != nil {
		return sqsloop.QueueAttributes{}, err
	}
	if err := ctx.Err(); err != nil {
		return sqsloop.QueueAttributes{}, err
	}
	if err := q.lock(s); err != nil { // closed by Broker.Close
		return sqsloop.QueueAttributes{}, err
	}
	s.sweep(time.Now())
	a := s.attributes()
	a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed = s.nVisible, len(s.inflight), len(s.delayed)
	s.mu.Unlock()
	return a, nil
}

// OpenDeadLetterQueue returns a new handle to the queue's dead-letter queue
// (see sqsloop.DeadLetterQueueOpener), which the caller closes; closing
// either handle leaves the other open. Errors: one wrapping
// sqsloop.ErrNoDeadLetterQueue and naming the queue when it has no
// redrive policy; sqsloop.ErrQueueNotFound, sqsloop.ErrMailboxClosed, or
// ctx's error. Safe for concurrent use.
func (q *Queue) OpenDeadLetterQueue(ctx context.Context) (sqsloop.Mailbox, error) {
	s, err := q.state()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := q.lock(s); err != nil {
		return nil, err
	}
	s.mu.Unlock()
	if s.dlq == nil {
		return nil, fmt.Errorf("memmailbox: queue %q: %w", q.name, sqsloop.ErrNoDeadLetterQueue)
	}
	return newQueue(s.dlq.name, s.dlq), nil
}
