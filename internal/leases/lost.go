package leases

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
	"github.com/sqsloop/sqsloop/visibility"
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
	m.pending.notes = append(m.pending.notes, note{level, msg, l.msg.ID, redact(err, l.msg.ReceiptHandle)})
}

// takeReports returns what is to be reported since the last call. Called
// with m.mu held.
func (m *Manager) takeReports() reports {
	r := m.pending
	m.pending = reports{}
	return r
}

// report logs the failed calls, and tells the logger, the observer, the
// hook and the handler that each lease is lost. Called without m.mu, on
// Run's goroutine.
func (m *Manager) report(r reports) {
	for _, n := range r.notes {
		m.log.Log(context.Background(), n.level, n.msg, slog.String("message_id", n.id), slog.Any("error", n.err))
	}
	for _, l := range r.lost {
		m.st.lost.Add(1)
		reason, cause := lostReason(l.lost)
		if l.neverBeat {
			m.st.neverBeat.Add(1)
		}
		if l.neverBeat && m.warnedNeverBeat.CompareAndSwap(false, true) {
			m.log.Warn("visibility: a handler never beat its heartbeat and its lease lapsed; the message will run again, "+
				"maybe many times, and end in the dead-letter queue although its handler succeeds. "+
				"Beat at least once per Visibility.Interval with heartbeat.Beat(ctx), read the input through heartbeat.NewReader, "+
				"or set Visibility.FixedInterval (with MaxExtension) for handlers that cannot beat. "+
				"Logged once; later ones are counted (Stats.LeasesLostNeverBeat)",
				slog.String("message_id", l.msg.ID), slog.Int("receive_count", l.msg.ReceiveCount),
				duration("interval", m.cfg.Interval), duration("ran", time.Since(l.msg.ReceivedAt)))
		} else {
			attrs := []slog.Attr{slog.String("message_id", l.msg.ID), slog.Int("receive_count", l.msg.ReceiveCount),
				slog.String("reason", reason)}
			if l.neverBeat {
				attrs = append(attrs, slog.Bool("never_beat", true))
			}
			if reason != sqsloop.LostNoBeats {
				attrs = append(attrs, slog.Any("error", cause))
			}
			m.log.LogAttrs(context.Background(), slog.LevelWarn, "visibility: lease lost; the message may be delivered again", attrs...)
		}
		if m.obs != nil {
			m.obs.LeaseLost(l.msg, sqsloop.LeaseLostEvent{Reason: reason, Err: l.lost, NeverBeat: l.neverBeat})
		}
		if m.cfg.OnLeaseLost != nil {
			m.cfg.OnLeaseLost(l.msg, l.lost)
		}
		if m.cfg.CancelOnLeaseLost && l.cancel != nil {
			l.cancel(l.lost)
		}
	}
}

// markLost records that l is lost for reason, and whether it counts as
// never beaten (rules.NeverBeat: lapsed while its handler ran without a
// beat since Begin), once: the LeaseLost event, the count, the WARN and
// the handler's ProcessEnd (Returned) all read this one answer. It queues
// the report for Run's loop. Called with m.mu held.
func (m *Manager) markLost(l *Lease, reason error) {
	if l.lost != nil {
		return
	}
	l.lost = leaseLost(l.msg.ID, redact(reason, l.msg.ReceiptHandle))
	// Lapsed with a handler that never beat: that handler cannot keep any
	// lease, and says nothing unless told.
	l.neverBeat = rules.NeverBeat(errors.Is(reason, visibility.ErrLeaseLapsed), l.begun && !l.returned, l.beat0, l.hb.LastBeat())
	m.pending.lost = append(m.pending.lost, l)
}

// lostError is the error of a lost lease: it matches ErrLeaseLost and its
// reason, and reads once ("visibility: lease of message X lost: lease
// lapsed without a heartbeat"), not as a chain of prefixes.
type lostError struct {
	id     string
	reason error
}

func (e *lostError) Error() string {
	return "visibility: lease of message " + e.id + " lost: " + strings.TrimPrefix(e.reason.Error(), "visibility: ")
}

func (e *lostError) Unwrap() []error { return []error{visibility.ErrLeaseLost, e.reason} }

// ErrorType names the error's class for instrumentation (OpenTelemetry's
// error.type): "lease_lost".
func (e *lostError) ErrorType() string { return "lease_lost" }

// leaseLost is the error of the lease of message id, lost for reason: it
// matches ErrLeaseLost and reason.
func leaseLost(id string, reason error) error {
	return &lostError{id: id, reason: reason}
}

// lostReason classifies a lost lease's error, and returns the reason's own
// error (without the lost-lease wrapping) to log.
func lostReason(err error) (string, error) {
	cause := err
	if le, ok := err.(*lostError); ok {
		cause = le.reason
	}
	switch {
	case errors.Is(err, visibility.ErrLeaseLapsed):
		return sqsloop.LostNoBeats, cause
	case errors.Is(err, sqsloop.ErrReceiptHandleExpired):
		return sqsloop.LostReceiptHandleExpired, cause
	case errors.Is(err, sqsloop.ErrLeaseCeiling):
		return sqsloop.LostCeiling, cause
	}
	return sqsloop.LostCallFailures, cause
}

// redact hides handle in err's text: SQS quotes the receipt handle in some
// error messages ("Value … for parameter ReceiptHandle is invalid"), and a
// receipt handle is never logged nor shown. The result still matches what
// err matches (errors.Is, errors.As).
func redact(err error, handle string) error {
	if err == nil || handle == "" || !strings.Contains(err.Error(), handle) {
		return err
	}
	return &redactedError{err: err, handle: handle}
}

type redactedError struct {
	err    error
	handle string
}

func (e *redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.handle, "[receipt handle]")
}

func (e *redactedError) Unwrap() error { return e.err }

// duration is a log attribute of d as text ("25s"): slog.Duration would
// log nanoseconds under slog.JSONHandler.
func duration(key string, d time.Duration) slog.Attr { return slog.String(key, d.String()) }
