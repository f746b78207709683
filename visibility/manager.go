package visibility

import (
	"container/heap"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// Mailbox is the part of a sqsloop.Mailbox the Manager calls: the two
// batch calls that change a received message's visibility or delete it.
// A sqsloop.Mailbox satisfies it.
//
// The Manager calls them from up to 16 goroutines at once, each with 1–10
// entries and a context bounded by Config.Interval/2 (at most 10 s), and
// reads one error per entry, in order (a missing result counts as a
// transient failure). An error wrapping sqsloop.ErrReceiptHandleExpired,
// sqsloop.ErrLeaseCeiling, sqsloop.ErrInvalidArgument,
// sqsloop.ErrQueueNotFound or sqsloop.ErrMailboxClosed ends its entry's
// attempts (the last two also make the Manager give up); one wrapping
// sqsloop.ErrAccessDenied is tried again and counted towards
// MaxAccessDenied; any other error is transient and tried again.
type Mailbox interface {
	// Delete acks messages by receipt handle (DeleteMessageBatch).
	Delete(ctx context.Context, receiptHandles []string) ([]error, error)
	// ChangeVisibility sets the visibility timeout of messages, counted
	// from now (ChangeMessageVisibilityBatch): extensions, nacks and
	// give-backs.
	ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error)
}

// MaxAccessDenied is how many consecutive calls of one kind (receives,
// deletes, visibility changes) may fail with sqsloop.ErrAccessDenied
// before the consumer or the Manager gives up for good: 5, enough to ride
// over an IAM change that is still propagating, few enough that a missing
// permission ends the process's work within seconds instead of retrying
// forever.
const MaxAccessDenied = 5

// Manager owns the leases of received messages: it is the only caller of
// Mailbox.Delete and Mailbox.ChangeVisibility for them. One goroutine
// (Run) extends alive leases, sends acks, nacks and give-backs, in batch
// calls of at most 10 entries (SQS's limit), and keeps every call about
// one receipt handle in the order it was decided: a lease is in at most
// one call at a time.
//
// Hold, Stats, Failed, Err and GiveBackAll, and the methods of the
// leases it returns, are safe for concurrent use with each other and with
// Run.
type Manager struct {
	cfg Config
	log *slog.Logger
	mb  Mailbox

	mu       sync.Mutex
	leases   leaseHeap // held leases not in a call nor queued, by due time
	acks     []*Lease  // decided acks waiting for their batch
	nacks    []*Lease  // decided nacks and give-backs waiting for their batch
	acksAt   time.Time // when the oldest waiting ack was queued
	nacksAt  time.Time // when the oldest waiting nack was queued
	lostNow  []*Lease  // lost leases to report, outside mu
	holds    uint64    // leases held so far: each lease's seq
	giveBack uint64    // GiveBackAll gives back the leases with seq ≤ this
	flushing bool      // Run's context is done: nothing is extended any more
	stopped  bool      // Run has returned: decisions are ignored
	denied   [2]int    // consecutive access-denied calls: deletes, visibility changes
	fatal    error     // why the Manager gave up; set once
	failed   chan struct{}

	wake    chan struct{}
	running atomic.Bool
	st      counters
}

// New returns a Manager that changes visibility and deletes through mb,
// logging to log (nil: slog.Default()): WARN records for lost leases and
// failed calls, ERROR records for acks that failed for good, message IDs
// only (receipt handles are never logged). It returns the errors of
// cfg.Validate (naming each bad field) for an invalid cfg, and an error
// wrapping sqsloop.ErrInvalidArgument for a nil mb.
func New(mb Mailbox, cfg Config, log *slog.Logger) (*Manager, error) {
	if mb == nil {
		return nil, fmt.Errorf("visibility.New: mailbox: must not be nil: %w", sqsloop.ErrInvalidArgument)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Manager{cfg: cfg.withDefaults(), mb: mb, log: log, wake: make(chan struct{}, 1), failed: make(chan struct{})}, nil
}

// Hold starts holding m, received with visibility timeout
// m.VisibilityTimeout at m.ReceivedAt, whose handler beats hb (nil: none
// yet, so a heartbeat-gated lease is not extended). cancel (may be nil) is
// called with an error matching ErrLeaseLost if the lease is lost and
// Config.CancelOnLeaseLost is set. The message need not have been received
// by this process: any receipt handle of the Mailbox's queue will do.
//
// Hold never blocks on the network. Every lease must end with a decision:
// Ack, Nack or GiveBack. Leases held after Run has returned are never
// served nor counted, and decisions about them are ignored. Safe for
// concurrent use.
func (m *Manager) Hold(msg *sqsloop.Message, hb *heartbeat.Heartbeat, cancel context.CancelCauseFunc) *Lease {
	l := &Lease{
		m:        m,
		msg:      msg,
		hb:       hb,
		cancel:   cancel,
		deadline: msg.ReceivedAt.Add(msg.VisibilityTimeout),
		lastExt:  msg.ReceivedAt,
		ceiling:  msg.ReceivedAt.Add(m.cfg.ceiling()),
		index:    -1,
	}
	l.due = m.firstLook(l)
	m.mu.Lock()
	if m.stopped {
		l.done = true
		m.mu.Unlock()
		return l
	}
	m.st.held.Add(1)
	m.holds++
	l.seq = m.holds
	heap.Push(&m.leases, l)
	first := l.index == 0
	m.mu.Unlock()
	if first {
		m.poke()
	}
	return l
}

// decide records the first decision about l and queues its call.
func (m *Manager) decide(l *Lease, d decision, delay time.Duration) {
	m.mu.Lock()
	if m.stopped || l.done || l.decided != holding {
		m.mu.Unlock()
		return
	}
	l.decided, l.delay = d, delay
	if l.index >= 0 {
		heap.Remove(&m.leases, l.index)
	}
	// A lease with an extension on the wire is settled when that call
	// returns: its answer says whether the lease held.
	poke := !l.busy && m.settle(l, time.Now())
	poke = poke || len(m.lostNow) > 0
	m.mu.Unlock()
	if poke {
		m.poke()
	}
}

// settle queues l's decided call, or ends l when nothing is left to send;
// a lease whose deadline has passed is lost first. It reports whether the
// loop must be woken. Called with m.mu held, l in neither the heap nor a
// call.
func (m *Manager) settle(l *Lease, now time.Time) bool {
	if l.lost == nil && !now.Before(l.deadline) {
		m.markLost(l, l.endReason())
	}
	switch {
	case l.decided == acking && l.lost != nil:
		if l.late {
			m.finish(l) // the one late attempt was made
			return false
		}
		l.late = true
		return m.enqueue(&m.acks, &m.acksAt, l, now)
	case l.decided == acking:
		return m.enqueue(&m.acks, &m.acksAt, l, now)
	case l.lost != nil:
		m.finish(l) // nothing to give back: visible, or delivered again, already
		return false
	case l.decided == givenUp:
		// A give-back does not wait for its window: the message is wanted
		// elsewhere now (the drain, or a group that must keep its order).
		m.enqueue(&m.nacks, &m.nacksAt, l, now)
		m.nacksAt = now.Add(-ackWindow)
		return true
	}
	return m.enqueue(&m.nacks, &m.nacksAt, l, now)
}

// enqueue appends l to a batch queue and reports whether the loop must be
// woken: the queue was empty (its window starts) or is full.
func (m *Manager) enqueue(q *[]*Lease, since *time.Time, l *Lease, now time.Time) bool {
	l.queued = true
	if len(*q) == 0 {
		*since = now
	}
	*q = append(*q, l)
	return len(*q) == 1 || len(*q) == sqsloop.MaxBatchSize
}

// finish ends l: the Manager no longer tracks it. Called with m.mu held.
func (m *Manager) finish(l *Lease) {
	if !l.done {
		l.done = true
		m.st.held.Add(-1)
	}
}

// GiveBackAll gives back every lease still holding (no decision yet) when
// it is called: at once, or, for a lease with an extension on the wire,
// when that call comes back. It is the end of a drain, when the handlers
// that held them are abandoned. Leases held later are not affected. Safe
// for concurrent use.
func (m *Manager) GiveBackAll() {
	m.mu.Lock()
	m.giveBack = m.holds
	now := time.Now()
	var held []*Lease
	for _, l := range m.leases {
		if l.decided == holding {
			held = append(held, l)
		}
	}
	for _, l := range held {
		heap.Remove(&m.leases, l.index)
		l.decided = givenUp
		m.settle(l, now)
	}
	m.mu.Unlock()
	m.poke()
}

// Failed returns a channel closed when the Manager has given up for good:
// its calls failed with sqsloop.ErrAccessDenied MaxAccessDenied times in a
// row, or with sqsloop.ErrQueueNotFound or sqsloop.ErrMailboxClosed. Err
// then says why. It goes on serving (a nack may still work where deletes
// are denied); the holder should stop taking work. Safe for concurrent use.
func (m *Manager) Failed() <-chan struct{} { return m.failed }

// Err returns why the Manager gave up (an error wrapping
// sqsloop.ErrAccessDenied, sqsloop.ErrQueueNotFound or
// sqsloop.ErrMailboxClosed), or nil while it has not. Safe for concurrent
// use.
func (m *Manager) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fatal
}

// giveUp records the Manager's fatal error, once. Called with m.mu held.
func (m *Manager) giveUp(err error) {
	if m.fatal == nil {
		m.fatal = err
		close(m.failed)
	}
}

func (m *Manager) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// firstLook is when a new lease is looked at first: Interval after its
// receive, never after its deadline.
func (m *Manager) firstLook(l *Lease) time.Time {
	due := l.lastExt.Add(m.cfg.Interval)
	if due.After(l.deadline) {
		due = l.deadline
	}
	return due
}

// markLost records that l is lost for reason and queues the report.
// Called with m.mu held.
func (m *Manager) markLost(l *Lease, reason error) {
	if l.lost != nil {
		return
	}
	l.lost = leaseLost(l.msg.ID, reason)
	m.lostNow = append(m.lostNow, l)
}
