package leases

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
	"github.com/sqsloop/sqsloop/visibility"
)

// Mailbox is the part of a sqsloop.Mailbox the Manager calls: the two
// batch calls that change a received message's visibility or delete it.
// A sqsloop.Mailbox satisfies it.
//
// The Manager calls them from up to 32 goroutines at once, each with 1–10
// entries and a context bounded by Config.Interval/2 (at most 10 s), and
// reads one error per entry, in order (a missing result counts as a
// transient failure). An error wrapping sqsloop.ErrReceiptHandleExpired,
// sqsloop.ErrLeaseCeiling, sqsloop.ErrInvalidArgument,
// sqsloop.ErrQueueNotFound or sqsloop.ErrMailboxClosed ends its entry's
// attempts (the last two also make the Manager give up); one wrapping
// sqsloop.ErrAccessDenied is tried again and counted towards
// visibility.MaxAccessDenied; any other error is transient and tried again.
type Mailbox interface {
	// Delete acks messages by receipt handle (DeleteMessageBatch).
	Delete(ctx context.Context, receiptHandles []string) ([]error, error)
	// ChangeVisibility sets the visibility timeout of messages, counted
	// from now (ChangeMessageVisibilityBatch): extensions, nacks and
	// give-backs.
	ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error)
}

// Manager owns the leases of received messages: it is the only caller of
// Mailbox.Delete and Mailbox.ChangeVisibility for them. One goroutine
// (Run) extends alive leases, sends acks, nacks and give-backs, in batch
// calls of at most 10 entries (SQS's limit), and keeps every call about
// one receipt handle in the order it was decided: a lease is in at most
// one call at a time.
//
// Hold, Stats, Failed, Err, GiveBackAll and Stop, and the methods of the
// leases it returns, are safe for concurrent use with each other and with
// Run.
type Manager struct {
	cfg visibility.Config // with its defaults: lengths.cfg
	ls  *Lengths
	log *slog.Logger
	mb  Mailbox
	obs sqsloop.Observer // cfg.Observer; nil: no events

	mu       sync.Mutex
	leases   leaseHeap // held leases not in a call nor queued, by due time
	spare    []*call   // calls whose outcome was applied, for reuse
	acks     []*Lease  // decided acks waiting for their batch
	nacks    []*Lease  // decided nacks and give-backs waiting for their batch
	acksAt   time.Time // when the oldest waiting ack was queued
	nacksAt  time.Time // when the oldest waiting nack was queued
	pending  reports   // what Run's goroutine reports next, outside mu
	holds    uint64    // leases held so far: each lease's seq
	giveBack uint64    // GiveBackAll gives back the leases with seq ≤ this
	flushing bool      // Run's context is done: nothing is extended any more
	stopped  bool      // Run has returned, or Interrupt was called: later holds and decisions are ignored, nothing is extended
	denied   [2]int    // consecutive access-denied calls: deletes, visibility changes
	fatal    error     // why the Manager gave up; set once
	failed   chan struct{}
	// Also guarded by mu:
	wire int           // leases in a call made and not yet applied (busy)
	idle chan struct{} // made by Interrupt; closed once no lease is in a call, queued, or waiting for a retry

	wake            chan struct{}
	running         atomic.Bool
	stop            chan struct{}   // closed by Stop, once
	stopOnce        sync.Once       // closes stop
	stopBy          context.Context // Stop's bound of the flush; set before stop is closed
	ran             chan struct{}   // closed when Run returns
	warnedNeverBeat atomic.Bool     // the WARN about a handler that never beat was logged
	st              counters
}

// New returns a Manager that changes visibility and deletes through mb,
// logging to log (nil: slog.Default()): WARN records for lost leases and
// failed calls, ERROR records for acks that failed for good, message IDs
// only (receipt handles are never logged). cfg is usually derived from
// the visibility timeout (ForVisibilityTimeout); a zero Interval takes
// visibility.DefaultInterval, and a zero Extension is chosen from what the
// Manager observes (Lengths). It returns the errors of Validate (naming
// each bad field) for an invalid cfg, and an error wrapping
// sqsloop.ErrInvalidArgument for a nil mb.
func New(mb Mailbox, cfg visibility.Config, log *slog.Logger) (*Manager, error) {
	if err := Validate(cfg); err != nil {
		return nil, err
	}
	return NewFor(mb, NewLengths(cfg), log)
}

// NewFor is New with the Lengths of the queue: the Managers that serve one
// queue one after another (sqslambda's invocations) share what they
// observe. ls's Config must be valid (Validate).
func NewFor(mb Mailbox, ls *Lengths, log *slog.Logger) (*Manager, error) {
	if mb == nil {
		return nil, fmt.Errorf("visibility: lease owner: mailbox: must not be nil: %w", sqsloop.ErrInvalidArgument)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Manager{cfg: ls.cfg, ls: ls, mb: mb, obs: ls.cfg.Observer, log: log, wake: make(chan struct{}, 1), failed: make(chan struct{}),
		stop: make(chan struct{}), ran: make(chan struct{})}, nil
}

// Configure replaces the Manager's Config (see New) before Run: a consumer
// learns its queue's visibility timeout at start-up. It returns the errors
// of Validate for an invalid cfg, and an error wrapping
// sqsloop.ErrAlreadyRunning once Run has been called.
func (m *Manager) Configure(cfg visibility.Config) error {
	if err := Validate(cfg); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running.Load() {
		return fmt.Errorf("visibility: Manager.Configure after Run: %w", sqsloop.ErrAlreadyRunning)
	}
	m.ls = NewLengths(cfg)
	m.cfg, m.obs = m.ls.cfg, cfg.Observer
	return nil
}

// Lengths returns the Manager's Lengths: its extensions, chosen or fixed.
func (m *Manager) Lengths() *Lengths {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ls
}

// Hold starts holding msg, received with visibility timeout
// msg.VisibilityTimeout at msg.ReceivedAt, whose handler beats hb. A nil
// hb means the message waits for its handler (a receive-ahead buffer):
// until Lease.Start gives it its heartbeat, the Manager extends it without
// beats, but only at looks less than one Extension after its receive; a
// lease never started then lapses at the deadline its last extension set.
// cancel (may be nil) is called with an error matching ErrLeaseLost if the
// lease is lost and Config.CancelOnLeaseLost is set. The message need not
// have been received by this process: any receipt handle of the Mailbox's
// queue will do.
//
// Hold never blocks on the network. Every lease must end with a decision:
// Ack, Nack, GiveBack or Release. Leases held after Run has returned, or
// after Interrupt, are never served nor counted, and decisions about them
// are ignored. Safe for
// concurrent use.
func (m *Manager) Hold(msg *sqsloop.Message, hb *heartbeat.Heartbeat, cancel context.CancelCauseFunc) *Lease {
	l := &Lease{
		m:        m,
		msg:      msg,
		hb:       hb,
		cancel:   cancel,
		deadline: msg.ReceivedAt.Add(msg.VisibilityTimeout),
		lastExt:  msg.ReceivedAt,
		beatSeen: msg.ReceivedAt,
		ceiling:  msg.ReceivedAt.Add(ceiling(m.cfg)),
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
