package visibility

import (
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

// takeLost returns the leases lost since the last call. Called with m.mu
// held.
func (m *Manager) takeLost() []*Lease {
	lost := m.lostNow
	m.lostNow = nil
	return lost
}

// report tells the logger, the hook and the handler that each lease is
// lost. Called without m.mu, on Run's goroutine.
func (m *Manager) report(lost []*Lease) {
	for _, l := range lost {
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
	m.lostNow = append(m.lostNow, l)
}

// leaseLost is the error of the lease of message id, lost for reason: it
// matches ErrLeaseLost and reason.
func leaseLost(id string, reason error) error {
	return fmt.Errorf("visibility: lease of message %s lost: %w: %w", id, ErrLeaseLost, reason)
}
