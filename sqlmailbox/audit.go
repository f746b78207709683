package sqlmailbox

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// AuditKind says what happened to the message of an audit row.
type AuditKind string

// Kinds of audit row.
const (
	// AuditFailure: the consumer reported a failure (Mailbox.RecordFailure).
	AuditFailure AuditKind = "failure"
	// AuditLeaseExpired: a receive's lease lapsed without an ack or a nack
	// (found by Sweep); the message is visible again.
	AuditLeaseExpired AuditKind = "lease-expired"
	// AuditDeadLettered: the message reached the redrive policy's
	// maxReceiveCount and was moved to the dead-letter queue (by Receive or
	// Sweep).
	AuditDeadLettered AuditKind = "dead-lettered"
	// AuditRetention: the message outlived the queue's retention period and
	// was deleted (by Sweep).
	AuditRetention AuditKind = "retention"
)

// AuditRecord is one row of the audit table: a failure, and where it left
// the message.
type AuditRecord struct {
	// Queue is the queue's name.
	Queue string
	// MessageID is the message's ID.
	MessageID string
	// ReceiveCount is the message's receive count at the time.
	ReceiveCount int
	// Kind says what happened.
	Kind AuditKind
	// Reason says why, in words: the consumer's error, or the rule that
	// applied.
	Reason string
	// At is when it was recorded, by the database's clock (postgres) or the
	// recording process's (sqlite).
	At time.Time
}

// maxReasonLen bounds AuditRecord.Reason as stored: 1,024 bytes.
const maxReasonLen = 1024

// RecordFailure adds a row to the audit table for msg, a message received
// through this queue whose handling failed, with reason (cut to 1,024
// bytes), and marks its receive no longer leased, so that Sweep does not
// report its nack's back-off ending as a lease that lapsed. It changes
// nothing else: the message comes back when its visibility timeout ends
// (the consumer's nack sets it). Call it from a consumer middleware:
//
//	func(next sqsloop.Handler) sqsloop.Handler {
//		return func(ctx context.Context, m *sqsloop.Message) error {
//			err := next(ctx, m)
//			if err != nil {
//				_ = mailbox.RecordFailure(context.WithoutCancel(ctx), m, err.Error())
//			}
//			return err
//		}
//	}
//
// Errors: one wrapping sqsloop.ErrReceiptHandleExpired when msg's receipt
// handle was not issued by this queue; sqsloop.ErrMailboxClosed after
// Close; ctx's error; or the database's. Safe for concurrent use.
func (m *Mailbox) RecordFailure(ctx context.Context, msg *sqsloop.Message, reason string) error {
	const op = "record a failure in"
	if err := m.check(op); err != nil {
		return err
	}
	ref, ok := m.handles.decode(msg.ReceiptHandle)
	if !ok {
		return fmt.Errorf("sqlmailbox: RecordFailure: message %s: receipt handle not issued by queue %q: %w",
			msg.ID, m.q.Spec.Name, sqsloop.ErrReceiptHandleExpired)
	}
	if len(reason) > maxReasonLen {
		reason = reason[:maxReasonLen]
	}
	rec := driver.AuditRow{Queue: m.q.Spec.Name, MessageID: msg.ID, ReceiveCount: msg.ReceiveCount, Kind: string(AuditFailure), Reason: reason}
	if err := m.s.d.RecordFailure(ctx, &m.q, time.Now(), ref, rec); err != nil {
		return m.fail(ctx, op, err)
	}
	return nil
}

// Audit returns up to limit rows of the audit table, newest first: those of
// the queue named, or of every queue when queue is "". Rows older than
// Config.AuditRetention are deleted by Sweep. It only reads the database
// (on SQLite it takes no write lock).
//
// Errors: sqsloop.ErrInvalidArgument for a limit below 1;
// sqsloop.ErrMailboxClosed after Close; ctx's error; or the database's.
func (s *Store) Audit(ctx context.Context, queue string, limit int) ([]AuditRecord, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: sqlmailbox: Audit: limit must be at least 1, got %d", sqsloop.ErrInvalidArgument, limit)
	}
	if err := s.check("Audit"); err != nil {
		return nil, err
	}
	rows, err := s.d.Audit(ctx, queue, limit)
	if err != nil {
		return nil, s.callError(ctx, "read the audit of", queue, err)
	}
	out := make([]AuditRecord, len(rows))
	for i, r := range rows {
		out[i] = AuditRecord{Queue: r.Queue, MessageID: r.MessageID, ReceiveCount: r.ReceiveCount, Kind: AuditKind(r.Kind), Reason: r.Reason, At: r.At}
	}
	return out, nil
}

// ArchivedMessage is one row of the archive table: a message as it was
// acked (Config.Archive).
type ArchivedMessage struct {
	Queue             string
	MessageID         string
	Body              string
	MessageAttributes map[string]sqsloop.MessageAttribute
	MessageGroupID    string
	ReceiveCount      int
	SentAt            time.Time
	// DeletedAt is when the ack deleted it.
	DeletedAt time.Time
}

// Archived returns up to limit acked messages of the queue named, newest
// first, as the archive table keeps them (Config.Archive): to audit what was
// done, or to send again. Rows older than Config.ArchiveRetention are
// deleted by Sweep. It only reads the database (on SQLite it takes no write
// lock).
//
// Errors: sqsloop.ErrInvalidArgument for a limit below 1;
// sqsloop.ErrMailboxClosed after Close; ctx's error; or the database's.
func (s *Store) Archived(ctx context.Context, queue string, limit int) ([]ArchivedMessage, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: sqlmailbox: Archived: limit must be at least 1, got %d", sqsloop.ErrInvalidArgument, limit)
	}
	if err := s.check("Archived"); err != nil {
		return nil, err
	}
	rows, err := s.d.Archived(ctx, queue, limit)
	if err != nil {
		return nil, s.callError(ctx, "read the archive of", queue, err)
	}
	out := make([]ArchivedMessage, len(rows))
	for i, r := range rows {
		attrs, err := decodeAttrs(r.Attributes, nil)
		if err != nil {
			return nil, err
		}
		out[i] = ArchivedMessage{Queue: r.Queue, MessageID: r.MessageID, Body: r.Body, MessageAttributes: attrs,
			MessageGroupID: r.GroupID, ReceiveCount: r.ReceiveCount, SentAt: r.SentAt, DeletedAt: r.DeletedAt}
	}
	return out, nil
}
