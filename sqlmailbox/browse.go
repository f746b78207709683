package sqlmailbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// An operator's view of a queue's messages: read without receiving them
// (no receive count goes up, no lease is taken, no receive row is
// touched), and moved or deleted in bulk by their keys, for an operator
// console (package console) or a script.

// Kinds of audit row the operator's calls add.
const (
	// AuditMoved: MoveMessages moved the message to another queue
	// (Reason names it, and who asked).
	AuditMoved AuditKind = "moved"
	// AuditDeleted: DeleteMessages deleted the message.
	AuditDeleted AuditKind = "deleted"
)

// MaxBrowse is the most messages one Browse returns, and the most keys one
// MoveMessages or DeleteMessages takes: 1,000.
const MaxBrowse = 1000

// MessageFilter selects messages for Browse and CountMessages. Every field
// set must match; the zero MessageFilter matches every message.
type MessageFilter struct {
	// MessageID matches the message of that ID.
	MessageID string
	// BodyContains matches a body holding it (case-sensitive).
	BodyContains string
	// Attribute matches a message that has the message attribute of that
	// name; with AttributeValue set too, one whose String or Number value
	// is AttributeValue exactly (a Binary attribute's value matches no
	// AttributeValue). A name holds only what SQS allows in one: letters,
	// digits, '_', '-' and '.'.
	Attribute, AttributeValue string
	// MinReceiveCount and MaxReceiveCount bound the receive count,
	// inclusive; 0 is no bound.
	MinReceiveCount, MaxReceiveCount int
	// SentAfter and SentBefore bound when the message was sent
	// (exclusive); zero is no bound.
	SentAfter, SentBefore time.Time
	// MessageGroupID matches the messages of that group.
	MessageGroupID string
}

// validate reports the filter's problems, naming the field, wrapping
// sqsloop.ErrInvalidArgument.
func (f MessageFilter) validate(op string) error {
	var errs []error
	for _, c := range f.Attribute {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			errs = append(errs, fmt.Errorf("%w: sqlmailbox: %s: MessageFilter.Attribute: must hold only letters, digits, '_', '-' and '.', got %q",
				sqsloop.ErrInvalidArgument, op, f.Attribute))
			break
		}
	}
	if f.AttributeValue != "" && f.Attribute == "" {
		errs = append(errs, fmt.Errorf("%w: sqlmailbox: %s: MessageFilter.AttributeValue: needs Attribute", sqsloop.ErrInvalidArgument, op))
	}
	if f.MinReceiveCount < 0 || f.MaxReceiveCount < 0 {
		errs = append(errs, fmt.Errorf("%w: sqlmailbox: %s: MessageFilter.MinReceiveCount and MaxReceiveCount: must be 0 (no bound) or more, got %d and %d",
			sqsloop.ErrInvalidArgument, op, f.MinReceiveCount, f.MaxReceiveCount))
	}
	return errors.Join(errs...)
}

func (f MessageFilter) driver() driver.Filter {
	return driver.Filter{MessageID: f.MessageID, BodyContains: f.BodyContains, Attribute: f.Attribute, Value: f.AttributeValue,
		MinReceiveCount: f.MinReceiveCount, MaxReceiveCount: f.MaxReceiveCount, SentAfter: f.SentAfter, SentBefore: f.SentBefore,
		GroupID: f.MessageGroupID}
}

// StoredMessage is one message as the database holds it.
type StoredMessage struct {
	// Seq is its row key: the order messages were stored in (a FIFO
	// queue's sequence number), and Browse's cursor.
	Seq int64
	// ID is its message ID; a moved message keeps it.
	ID                string
	Body              string
	MessageAttributes map[string]sqsloop.MessageAttribute
	// MessageGroupID and DeduplicationID are "" when it has none.
	MessageGroupID, DeduplicationID string
	// Priority is its priority (0 on a queue without priorities).
	Priority int
	// ReceiveCount counts its receives so far.
	ReceiveCount int
	// SentAt is when it was sent (or moved here); FirstReceivedAt its
	// first receive's time, zero when never received.
	SentAt, FirstReceivedAt time.Time
	// VisibleAt is when its visibility timeout or delay ends (or ended).
	VisibleAt time.Time
	// State is where it stands now, as QueueAttributes counts it:
	// "visible" (a receive may take it), "in flight" (a receive took it and
	// its visibility timeout, a lease or a nack's back-off, has not ended)
	// or "delayed" (never received, its delay not over).
	State string
}

// QueueSummary is one queue of QueueSummaries.
type QueueSummary struct {
	Name string
	// Attributes are the queue's, with exact counts (as
	// Mailbox.QueueAttributes reports them).
	Attributes sqsloop.QueueAttributes
	// OldestSentAt is when its oldest message was sent; zero when it is
	// empty.
	OldestSentAt time.Time
	// GroupsInFlight counts the message groups with a message in flight
	// (on a FIFO queue, the groups that deliver nothing else meanwhile).
	GroupsInFlight int
}

// browser returns the driver's operator half.
func (s *Store) browser() driver.Browser {
	return s.d.(driver.Browser) // both drivers implement it
}

// QueueSummaries lists every queue of the database by name, with its
// attributes, counts, oldest message and message groups in flight, in one
// snapshot. It reads every message (for the counts): call it every few
// seconds at most, not per receive. It only reads (on SQLite it takes no
// write lock).
//
// Errors: sqsloop.ErrMailboxClosed after Close; ctx's error; or the
// database's. Safe for concurrent use.
func (s *Store) QueueSummaries(ctx context.Context) ([]QueueSummary, error) {
	if err := s.check("QueueSummaries"); err != nil {
		return nil, err
	}
	rows, err := s.browser().QueueSummaries(ctx, time.Now())
	if err != nil {
		return nil, s.callError(ctx, "list", "*", err)
	}
	out := make([]QueueSummary, len(rows))
	for i, r := range rows {
		a := attributes(&r.Queue)
		a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed = r.Counts.Visible, r.Counts.InFlight, r.Counts.Delayed
		out[i] = QueueSummary{Name: r.Queue.Spec.Name, Attributes: a, OldestSentAt: r.OldestSentAt, GroupsInFlight: r.GroupsInFlight}
	}
	return out, nil
}

// Browse returns up to limit (1–1,000: MaxBrowse) messages of the queue
// named that match f and whose Seq is above after, in Seq order: pass the
// last one's Seq to read the next page, 0 for the first. It reads without
// receiving: no receive count goes up, no message is hidden, on any
// queue, a dead-letter queue or one with a redrive policy. It only reads
// (on SQLite it takes no write lock).
//
// Errors: sqsloop.ErrInvalidArgument for a limit out of range or a bad
// filter (naming the field); sqsloop.ErrQueueNotFound when the queue does
// not exist; sqsloop.ErrMailboxClosed after Close; ctx's error; or the
// database's. Safe for concurrent use.
func (s *Store) Browse(ctx context.Context, queue string, f MessageFilter, after int64, limit int) ([]StoredMessage, error) {
	if limit < 1 || limit > MaxBrowse {
		return nil, fmt.Errorf("%w: sqlmailbox: Browse: limit must be between 1 and %d, got %d", sqsloop.ErrInvalidArgument, MaxBrowse, limit)
	}
	if err := f.validate("Browse"); err != nil {
		return nil, err
	}
	q, err := s.load(ctx, "Browse", queue)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rows, err := s.browser().Browse(ctx, &q, now, f.driver(), after, limit)
	if err != nil {
		return nil, s.callError(ctx, "browse", queue, err)
	}
	out := make([]StoredMessage, len(rows))
	for i, r := range rows {
		attrs, err := decodeAttrs(r.Attributes, nil)
		if err != nil {
			return nil, err
		}
		state := "visible"
		switch {
		case r.Held:
			state = "in flight"
		case r.VisibleAt.After(now):
			state = "delayed"
		}
		out[i] = StoredMessage{Seq: r.ID, ID: r.MessageID, Body: r.Body, MessageAttributes: attrs, MessageGroupID: r.GroupID,
			DeduplicationID: r.DedupID, Priority: r.Priority, ReceiveCount: r.ReceiveCount, SentAt: r.SentAt,
			FirstReceivedAt: r.FirstReceivedAt, VisibleAt: r.VisibleAt, State: state}
	}
	return out, nil
}

// CountMessages counts the messages of the queue named that match f, in
// every state, without receiving them. It only reads (on SQLite it takes
// no write lock), every message of the queue.
//
// Errors: as Browse's.
func (s *Store) CountMessages(ctx context.Context, queue string, f MessageFilter) (int, error) {
	if err := f.validate("CountMessages"); err != nil {
		return 0, err
	}
	q, err := s.load(ctx, "CountMessages", queue)
	if err != nil {
		return 0, err
	}
	n, err := s.browser().CountMatching(ctx, &q, time.Now(), f.driver())
	if err != nil {
		return 0, s.callError(ctx, "count the messages of", queue, err)
	}
	return n, nil
}

// MoveMessages moves the messages of the queue from whose Seq is in seqs
// (1–1,000 of them: MaxBrowse) to the queue to, in one transaction, and
// returns the Seqs of those it moved, ascending. It moves each message
// whole, once: its ID, body, attributes, message group, deduplication ID
// and (when to has priorities) priority; in to it is sent now, visible at
// once and never received, under a new Seq (so no receipt handle of its
// old place names it, and on a FIFO queue it comes after the group's
// messages already there). A message no longer in from, or in flight
// (a receive holds it: its holder may still ack it), is left where it is
// and not returned. Each message moved gets an audit row of kind
// AuditMoved under from's name, with reason (cut to 1,024 bytes; say who
// asked), and to's long polls are woken. A process that dies during the
// call moves all of the batch or none of it: nothing is lost or copied.
//
// The queues must be of one type: FIFO to FIFO, standard to standard.
//
// Errors: sqsloop.ErrInvalidArgument for no or too many seqs, one queue
// as both, or queues of two types; sqsloop.ErrQueueNotFound when either
// queue does not exist; sqsloop.ErrMailboxClosed after Close; ctx's error;
// or the database's (then nothing moved). Safe for concurrent use.
func (s *Store) MoveMessages(ctx context.Context, from, to string, seqs []int64, reason string) ([]int64, error) {
	if err := checkSeqs("MoveMessages", seqs); err != nil {
		return nil, err
	}
	if from == to {
		return nil, fmt.Errorf("%w: sqlmailbox: MoveMessages: from and to are both %q", sqsloop.ErrInvalidArgument, from)
	}
	src, err := s.load(ctx, "MoveMessages", from)
	if err != nil {
		return nil, err
	}
	dst, err := s.load(ctx, "MoveMessages", to)
	if err != nil {
		return nil, err
	}
	if src.Spec.FIFO != dst.Spec.FIFO {
		return nil, fmt.Errorf("%w: sqlmailbox: MoveMessages: %q and %q are of two types (FIFO and standard)", sqsloop.ErrInvalidArgument, from, to)
	}
	moved, err := s.browser().Move(ctx, &src, &dst, time.Now(), seqs, auditNote(from, AuditMoved, reason))
	if err != nil {
		return nil, s.callError(ctx, "move messages from", from, err)
	}
	if len(moved) > 0 {
		s.hub.wake(dst.ID, len(moved))
	}
	return moved, nil
}

// DeleteMessages deletes the messages of the queue named whose Seq is in
// seqs (1–1,000: MaxBrowse), in one transaction, and returns the Seqs it
// deleted, ascending; as MoveMessages, it leaves a message in flight where
// it is, and audits each deletion (kind AuditDeleted, with reason).
//
// Errors: sqsloop.ErrInvalidArgument for no or too many seqs;
// sqsloop.ErrQueueNotFound when the queue does not exist;
// sqsloop.ErrMailboxClosed after Close; ctx's error; or the database's
// (then nothing was deleted). Safe for concurrent use.
func (s *Store) DeleteMessages(ctx context.Context, queue string, seqs []int64, reason string) ([]int64, error) {
	if err := checkSeqs("DeleteMessages", seqs); err != nil {
		return nil, err
	}
	q, err := s.load(ctx, "DeleteMessages", queue)
	if err != nil {
		return nil, err
	}
	deleted, err := s.browser().DeleteRows(ctx, &q, time.Now(), seqs, auditNote(queue, AuditDeleted, reason))
	if err != nil {
		return nil, s.callError(ctx, "delete messages of", queue, err)
	}
	if len(deleted) > 0 && q.Spec.FIFO {
		s.hub.wake(q.ID, len(deleted)) // a group's next message may be receivable
	}
	return deleted, nil
}

// MessageHistory returns up to limit audit rows of the message ID, in any
// queue, newest first: its failures, lapsed leases, moves to the
// dead-letter queue and back, and deletion by an operator, as long as
// Config.AuditRetention keeps them. It reads the whole audit table (it has
// no index on message IDs): an operator's call.
//
// Errors: sqsloop.ErrInvalidArgument for a limit below 1;
// sqsloop.ErrMailboxClosed after Close; ctx's error; or the database's.
func (s *Store) MessageHistory(ctx context.Context, messageID string, limit int) ([]AuditRecord, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: sqlmailbox: MessageHistory: limit must be at least 1, got %d", sqsloop.ErrInvalidArgument, limit)
	}
	if err := s.check("MessageHistory"); err != nil {
		return nil, err
	}
	rows, err := s.browser().MessageAudit(ctx, messageID, limit)
	if err != nil {
		return nil, s.callError(ctx, "read the audit of message", messageID, err)
	}
	out := make([]AuditRecord, len(rows))
	for i, r := range rows {
		out[i] = AuditRecord{Queue: r.Queue, MessageID: r.MessageID, ReceiveCount: r.ReceiveCount, Kind: AuditKind(r.Kind), Reason: r.Reason, At: r.At}
	}
	return out, nil
}

// checkSeqs checks the keys of a bulk call: 1 to MaxBrowse.
func checkSeqs(op string, seqs []int64) error {
	if len(seqs) < 1 || len(seqs) > MaxBrowse {
		return fmt.Errorf("%w: sqlmailbox: %s: seqs must hold 1 to %d keys, got %d", sqsloop.ErrInvalidArgument, op, MaxBrowse, len(seqs))
	}
	return nil
}

// auditNote is the audit row of an operator's call on queue: its kind and
// reason (cut to maxReasonLen).
func auditNote(queue string, kind AuditKind, reason string) driver.AuditRow {
	if len(reason) > maxReasonLen {
		reason = reason[:maxReasonLen]
	}
	return driver.AuditRow{Queue: queue, Kind: string(kind), Reason: reason}
}
