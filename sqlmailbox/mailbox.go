package sqlmailbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Mailbox is one queue of a Store: it implements sqsloop.Mailbox,
// sqsloop.BulkSender, sqsloop.AttributesReader and
// sqsloop.DeadLetterQueueOpener. Several Mailboxes, in several processes, may serve one queue; a message is in
// flight to at most one receiver at a time. All methods are safe for
// concurrent use. A long poll waits in its caller's goroutine; the first
// one of a Store on PostgreSQL starts the Store's listener (one goroutine,
// which the Store owns and Store.Close stops); no method starts another.
type Mailbox struct {
	s          *Store
	q          driver.QueueRecord
	handles    *signer // of q.Key
	deadLetter string  // DeadLetterReason of q's redrive policy

	done      chan struct{} // closed by Close
	closeOnce sync.Once

	looking struct { // the togethers of its receives' looks, by visibility timeout
		mu           sync.Mutex
		byVisibility map[time.Duration]*together[driver.ReceiveArgs, taken]
	}
	deletes together[[]driver.Ref, []bool] // its acks

	receiver struct {
		mu         sync.Mutex
		id         string
		registered bool
		started    time.Time // of the first registration
		renewed    time.Time
	}
}

var (
	_ sqsloop.Mailbox               = (*Mailbox)(nil)
	_ sqsloop.AttributesReader      = (*Mailbox)(nil)
	_ sqsloop.DeadLetterQueueOpener = (*Mailbox)(nil)
	_ sqsloop.BulkSender            = (*Mailbox)(nil)
)

func (s *Store) mailbox(q driver.QueueRecord) *Mailbox {
	m := &Mailbox{s: s, q: q, handles: newSigner(q.Key), done: make(chan struct{}),
		deadLetter: driver.DeadLetterReason(q.Spec.MaxReceiveCount, q.DeadLetterQueue)}
	var b [8]byte
	_, _ = rand.Read(b[:])
	m.receiver.id = hex.EncodeToString(b[:])
	return m
}

// Name returns the queue's name.
func (m *Mailbox) Name() string { return m.q.Spec.Name }

// ReceiverID returns the ID of this Mailbox's row in the receiver registry
// (Store.Receivers), which its first Receive registers.
func (m *Mailbox) ReceiverID() string { return m.receiver.id }

// Close closes this Mailbox: a Receive waiting in a long poll returns an
// error wrapping sqsloop.ErrMailboxClosed at once, and so does every later
// call. Its receiver row is deleted (with a 5 s budget; a failure to
// delete it is ignored: the row then shows the receiver dead). The queue, its
// messages and other Mailboxes stay; messages in flight stay in flight
// until their leases end. Close is idempotent and returns nil.
func (m *Mailbox) Close() error {
	m.closeOnce.Do(func() {
		close(m.done)
		m.receiver.mu.Lock()
		registered := m.receiver.registered
		m.receiver.registered = false
		m.receiver.mu.Unlock()
		if registered && m.s.untrack(m.receiver.id) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = m.s.d.RemoveReceiver(ctx, m.receiver.id)
		}
	})
	return nil
}

// check fails with sqsloop.ErrMailboxClosed once m or its Store is closed.
func (m *Mailbox) check(op string) error {
	select {
	case <-m.done:
		return fmt.Errorf("sqlmailbox: %s queue %q: %w", op, m.q.Spec.Name, sqsloop.ErrMailboxClosed)
	default:
		return m.s.check(op)
	}
}

// fail wraps a driver's error for the call op (see Store.callError).
func (m *Mailbox) fail(ctx context.Context, op string, err error) error {
	return m.s.callError(ctx, op, m.q.Spec.Name, err)
}

// notFound is the error of a call on a queue that no longer exists.
func (m *Mailbox) notFound(op string) error {
	return fmt.Errorf("sqlmailbox: %s queue %q: %w", op, m.q.Spec.Name, sqsloop.ErrQueueNotFound)
}

// QueueAttributes reports the queue's attributes as it was created (with
// defaults applied: VisibilityTimeout, Delay, RetentionPeriod,
// MaxMessageSize, the redrive policy with the dead-letter queue by name,
// FIFO, ContentBasedDeduplication) and its messages now, counted exactly
// (ApproximateMessages visible, …InFlight received and hidden, …Delayed
// never received and delayed). It only reads the database (on SQLite it
// takes no write lock).
//
// Errors: one wrapping sqsloop.ErrQueueNotFound when the queue was
// deleted; sqsloop.ErrMailboxClosed after Close; ctx's error; or the
// database's. Safe for concurrent use.
func (m *Mailbox) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	const op = "get attributes of"
	if err := m.check(op); err != nil {
		return sqsloop.QueueAttributes{}, err
	}
	c, err := m.s.d.Counts(ctx, &m.q, time.Now())
	if err != nil {
		return sqsloop.QueueAttributes{}, m.fail(ctx, op, err)
	}
	a := attributes(&m.q)
	a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed = c.Visible, c.InFlight, c.Delayed
	return a, nil
}

// attributes returns the queue's attributes as it was created, without
// counts.
func attributes(q *driver.QueueRecord) sqsloop.QueueAttributes {
	sp := q.Spec
	return sqsloop.QueueAttributes{
		VisibilityTimeout:         sp.VisibilityTimeout,
		Delay:                     sp.Delay,
		RetentionPeriod:           sp.RetentionPeriod,
		MaxMessageSize:            sp.MaxMessageSize,
		MaxReceiveCount:           sp.MaxReceiveCount,
		DeadLetterQueue:           q.DeadLetterQueue,
		FIFO:                      sp.FIFO,
		ContentBasedDeduplication: sp.ContentBasedDeduplication,
		Priority:                  sp.Priority,
	}
}

// OpenDeadLetterQueue returns a new Mailbox of the queue's dead-letter
// queue, in the same Store; the caller closes it.
//
// Errors: one wrapping sqsloop.ErrNoDeadLetterQueue when the queue has no
// redrive policy; sqsloop.ErrQueueNotFound when the dead-letter queue no
// longer exists; sqsloop.ErrMailboxClosed after Close; ctx's error; or the
// database's. Safe for concurrent use.
func (m *Mailbox) OpenDeadLetterQueue(ctx context.Context) (sqsloop.Mailbox, error) {
	if err := m.check("open the dead-letter queue of"); err != nil {
		return nil, err
	}
	if m.q.DeadLetterQueue == "" {
		return nil, fmt.Errorf("sqlmailbox: queue %q: %w", m.q.Spec.Name, sqsloop.ErrNoDeadLetterQueue)
	}
	return m.s.Queue(ctx, m.q.DeadLetterQueue)
}

// renewReceiver registers this Mailbox's receiver row at its first receive
// (register true) and renews it at most every third of Config.ReceiverTTL
// after, on receives, acks and visibility changes alike: a receiver whose
// handlers are all busy with long jobs receives nothing for a while, but
// its lease owner keeps extending their leases. A renewal writes the row
// again (RegisterReceiver), so a row a sweep deleted comes back. The call
// that finds another call of this Mailbox renewing skips it rather than
// wait for the database under its own context. The registry is for
// operators: a failure is left for the next call to mend, never returned.
func (m *Mailbox) renewReceiver(ctx context.Context, now time.Time, register bool) {
	r := &m.receiver
	if !r.mu.TryLock() {
		return // another call is renewing the row
	}
	defer r.mu.Unlock()
	if (r.registered && now.Sub(r.renewed) < m.s.cfg.ReceiverTTL/3) || (!r.registered && !register) {
		return
	}
	select {
	case <-m.done:
		return // Close removes the row; do not add it back
	default:
	}
	if r.started.IsZero() {
		r.started = now
	}
	if !m.s.track(r.id) {
		return // the Store is closing, and removes the rows it knows of
	}
	defer m.s.registering.Done()
	err := m.s.d.RegisterReceiver(ctx, driver.ReceiverRow{
		ID: r.id, Queue: m.q.Spec.Name, Host: m.s.host, PID: m.s.pid, StartedAt: r.started, LastSeen: now,
	})
	if err == nil {
		r.registered, r.renewed = true, now
	}
}
