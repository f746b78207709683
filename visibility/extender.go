package visibility

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// Changer is the part of a sqsloop.Mailbox the extender needs.
type Changer interface {
	ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error)
}

// maxParallelCalls bounds the batch calls one sweep has in flight at once.
const maxParallelCalls = 4

// maxCallTimeout bounds one ChangeMessageVisibilityBatch call (also bounded
// by Interval/2, so a hung call cannot hold up the next look at the leases):
// a call that times out counts as a transient failure.
const maxCallTimeout = 10 * time.Second

// ErrAlreadyRunning is returned by a second concurrent Extender.Run.
var ErrAlreadyRunning = errors.New("visibility: Extender.Run already running")

// Extender extends the leases of every message attached to it from one
// goroutine (Run). Attach and Detach are safe for concurrent use with each
// other and with Run.
type Extender struct {
	cfg Config
	mb  Changer

	mu      sync.Mutex
	leases  leaseHeap
	wake    chan struct{}
	running atomic.Bool

	calls, extended, lost, failures, largest atomic.Int64
}

// Stats counts an Extender's work since it was created.
type Stats struct {
	// Calls is the number of ChangeMessageVisibilityBatch calls sent.
	Calls int64
	// Extended is the number of entries that extended a lease.
	Extended int64
	// Lost is the number of leases reported lost.
	Lost int64
	// Failures is the number of entries that failed transiently.
	Failures int64
	// LargestBatch is the most entries one call carried (≤ 10).
	LargestBatch int64
}

// New returns an Extender that extends leases through mb. It returns the
// errors of cfg.Validate (naming each bad field) for an invalid cfg, and an
// error wrapping sqsloop.ErrInvalidArgument for a nil mb.
func New(mb Changer, cfg Config) (*Extender, error) {
	if mb == nil {
		return nil, fmt.Errorf("visibility.New: mailbox is nil: %w", sqsloop.ErrInvalidArgument)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Extender{cfg: cfg.withDefaults(), mb: mb, wake: make(chan struct{}, 1)}, nil
}

// Stats returns the extender's counters. Safe for concurrent use.
func (e *Extender) Stats() Stats {
	return Stats{Calls: e.calls.Load(), Extended: e.extended.Load(), Lost: e.lost.Load(), Failures: e.failures.Load(), LargestBatch: e.largest.Load()}
}

// Attach starts serving m, received with visibility timeout
// m.VisibilityTimeout at m.ReceivedAt, whose handler beats hb. cancel (may be
// nil) is called with a *LeaseLostError if the lease is lost and
// Config.CancelOnLeaseLost is set. Attach never blocks on the network. With
// extension disabled the returned lease is never extended but still reports
// nothing lost; hand every lease back to Detach.
func (e *Extender) Attach(m *sqsloop.Message, hb *heartbeat.Heartbeat, cancel context.CancelCauseFunc) *Lease {
	l := &Lease{
		msg:      m,
		hb:       hb,
		cancel:   cancel,
		deadline: m.ReceivedAt.Add(m.VisibilityTimeout),
		lastExt:  m.ReceivedAt,
		ceiling:  m.ReceivedAt.Add(e.cfg.ceiling()),
		index:    -1,
	}
	if e.cfg.Disabled {
		return l
	}
	l.due = e.nextDue(l)
	e.mu.Lock()
	heap.Push(&e.leases, l)
	first := l.index == 0
	e.mu.Unlock()
	if first {
		e.poke()
	}
	return l
}

// Detach stops serving l. If an extension of l is in flight it waits for it
// to finish (at most one call's timeout: Interval/2, capped at 10 s), so
// that an ack or nack sent after Detach returns cannot be overtaken by an
// extension. It returns the *LeaseLostError l was lost with, or nil if the
// lease held. A lease whose deadline has passed is lost even if the
// extender's goroutine had not noticed yet (and with extension disabled);
// Detach then reports it itself (log, OnLeaseLost, Stats). Safe to call once
// per lease, from any goroutine.
func (e *Extender) Detach(l *Lease) error {
	e.mu.Lock()
	if l.index >= 0 {
		heap.Remove(&e.leases, l.index)
	}
	l.detached = true
	ch := l.sending
	e.mu.Unlock()
	if ch != nil {
		<-ch
	}
	e.mu.Lock()
	lapsed := l.lost == nil && !time.Now().Before(l.deadline)
	if lapsed {
		// The deadline passed before the extender's goroutine looked at the
		// lease: it is lost all the same.
		e.markLost(l, l.endReason())
	}
	lost := l.lost
	e.mu.Unlock()
	if lapsed {
		e.report(l)
	}
	return lost
}

// Err returns the *LeaseLostError l was lost with, or nil while it holds.
// Safe for concurrent use.
func (e *Extender) Err(l *Lease) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return l.lost
}

// Len returns the number of leases attached. Safe for concurrent use.
func (e *Extender) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.leases)
}

func (e *Extender) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// nextDue is when l is looked at next: Interval after its last extension
// (or its receive), and never after its deadline.
func (e *Extender) nextDue(l *Lease) time.Time {
	due := l.lastExt.Add(e.cfg.Interval)
	if due.After(l.deadline) {
		due = l.deadline
	}
	return due
}

// Run extends due leases until ctx is done, then returns nil. It is the
// extender's one goroutine; leases still attached when it returns are no
// longer extended. A second concurrent Run returns ErrAlreadyRunning.
func (e *Extender) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer e.running.Store(false)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.mu.Lock()
		var fire <-chan time.Time
		if len(e.leases) > 0 {
			timer.Reset(time.Until(e.leases[0].due))
			fire = timer.C
		}
		e.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-e.wake:
		case <-fire:
			e.sweep(ctx, time.Now())
		}
	}
}
