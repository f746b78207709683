package visibility

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

var (
	// ErrLeaseLost matches (errors.Is) every error a lost lease is
	// reported with (Config.OnLeaseLost, Lease.Err, and the cause of the
	// handler's context with Config.CancelOnLeaseLost): the message's lease
	// is gone and another worker may receive the message. The same error
	// also matches its reason: sqsloop.ErrReceiptHandleExpired (the handle
	// went stale), ErrLeaseLapsed (no beat), sqsloop.ErrLeaseCeiling (12
	// hours or Config.MaxExtension reached), another permanent error of an
	// extension (sqsloop.ErrQueueNotFound, sqsloop.ErrMailboxClosed,
	// sqsloop.ErrInvalidArgument), or the last transient error of the
	// extensions or acks that kept failing until the deadline.
	ErrLeaseLost = errors.New("visibility: lease lost")

	// ErrLeaseLapsed is the reason of a lease that ran out because its
	// handler did not beat since the previous extension (HeartbeatGated), or
	// because extension is disabled.
	ErrLeaseLapsed = errors.New("visibility: lease lapsed without a heartbeat")
)

// reports are what Run's goroutine tells the logger, the hook and the
// handlers, outside m.mu: a slow logger or hook must not hold up Hold,
// Start and the decisions, which take m.mu.
type reports struct {
	lost  []*Lease // leases lost
	notes []note   // failed calls
}

// note is the record of a failed call about one message.
type note struct {
	level slog.Level
	msg   string
	id    string // the message's ID (receipt handles are never logged)
	err   error
}

// noteFailure queues the record of l's failed call. Called with m.mu held.
func (m *Manager) noteFailure(level slog.Level, msg string, l *Lease, err error) {
	m.pending.notes = append(m.pending.notes, note{level, msg, l.msg.ID, err})
}

// takeReports returns what is to be reported since the last call. Called
// with m.mu held.
func (m *Manager) takeReports() reports {
	r := m.pending
	m.pending = reports{}
	return r
}

// report logs the failed calls, and tells the logger, the hook and the
// handler that each lease is lost. Called without m.mu, on Run's
// goroutine.
func (m *Manager) report(r reports) {
	for _, n := range r.notes {
		m.log.Log(context.Background(), n.level, n.msg, slog.String("message_id", n.id), slog.Any("error", n.err))
	}
	for _, l := range r.lost {
		m.st.lost.Add(1)
		m.log.Warn("visibility: lease lost; the message may be delivered again",
			slog.String("message_id", l.msg.ID), slog.Int("receive_count", l.msg.ReceiveCount), slog.Any("reason", l.lost))
		if m.cfg.OnLeaseLost != nil {
			m.cfg.OnLeaseLost(l.msg, l.lost)
		}
		if m.cfg.CancelOnLeaseLost && l.cancel != nil {
			l.cancel(l.lost)
		}
	}
}

// markLost records that l is lost for reason and queues the report.
// Called with m.mu held.
func (m *Manager) markLost(l *Lease, reason error) {
	if l.lost != nil {
		return
	}
	l.lost = leaseLost(l.msg.ID, reason)
	m.pending.lost = append(m.pending.lost, l)
}

// leaseLost is the error of the lease of message id, lost for reason: it
// matches ErrLeaseLost and reason.
func leaseLost(id string, reason error) error {
	return fmt.Errorf("visibility: lease of message %s lost: %w: %w", id, ErrLeaseLost, reason)
}
