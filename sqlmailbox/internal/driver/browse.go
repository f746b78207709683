package driver

import (
	"context"
	"time"
)

// Browser is the operator's half of a Driver: reading messages without
// receiving them (no receive count, no lease), and moving or deleting
// chosen ones in bulk, for the console and the Store's Browse,
// CountMessages, MoveMessages and DeleteMessages. Both drivers implement
// it; it is an interface of its own because no receive, ack or sweep path
// calls it.
//
// Every method is safe for concurrent use and runs in one transaction.
// "Held" below means in flight: received, its visibility deadline ahead
// (receive count above 0); a message that is visible or was never received
// (delayed) is not held.
type Browser interface {
	// QueueSummaries returns every queue, by name, with its counts (as
	// Counts), its oldest message's send time (zero for an empty queue) and
	// how many message groups have a message held. It only reads.
	QueueSummaries(ctx context.Context, now time.Time) ([]QueueSummary, error)

	// Browse returns up to limit messages of q matching f whose row key
	// is above after, in key order (the order they were stored). It only
	// reads.
	Browse(ctx context.Context, q *QueueRecord, now time.Time, f Filter, after int64, limit int) ([]StoredRow, error)
	// CountMatching counts the messages of q matching f. It only reads.
	CountMatching(ctx context.Context, q *QueueRecord, now time.Time, f Filter) (int, error)

	// Move moves the messages of from whose row keys are in ids and that
	// are not held to the queue to: each gets a new row in to (a new key,
	// so no receipt handle of its old row names it) with its message ID,
	// body, attributes, message group and deduplication ID, its priority
	// when to has priorities (else 0), sent and visible now, never
	// received; its old row is deleted and an audit row (a.Kind, a.Reason,
	// its receive count, under from's name) says so, all in one
	// transaction. It returns the keys of the rows it moved, ascending,
	// and wakes to's long polls in other processes where the database can.
	Move(ctx context.Context, from, to *QueueRecord, now time.Time, ids []int64, a AuditRow) ([]int64, error)
	// DeleteRows deletes the messages of q whose row keys are in ids and
	// that are not held, with an audit row each (a.Kind, a.Reason), in one
	// transaction, and returns the keys it deleted, ascending.
	DeleteRows(ctx context.Context, q *QueueRecord, now time.Time, ids []int64, a AuditRow) ([]int64, error)

	// MessageAudit returns up to limit audit rows of the message ID, of
	// any queue, newest first. It only reads (every audit row: the table
	// has no index on message IDs).
	MessageAudit(ctx context.Context, messageID string, limit int) ([]AuditRow, error)
}

// Filter selects messages for Browse, CountMatching and the Store's
// callers; every field set must match. Strings are compared exactly
// (BodyContains as a substring, case-sensitive).
type Filter struct {
	MessageID    string
	BodyContains string
	// Attribute names a message attribute the message has; with Value
	// set, its string value (a String or Number attribute's) equals Value.
	// The name holds only the characters SQS allows in one (checked by
	// the caller): letters, digits, '_', '-' and '.'.
	Attribute, Value string
	// MinReceiveCount and MaxReceiveCount bound the receive count; 0 is no
	// bound.
	MinReceiveCount, MaxReceiveCount int
	// SentAfter and SentBefore bound the send time (after: strictly later;
	// before: strictly earlier); zero is no bound.
	SentAfter, SentBefore time.Time
	GroupID               string
}

// StoredRow is one message as Browse reads it.
type StoredRow struct {
	ID              int64 // row key
	MessageID       string
	Body            string
	Attributes      []byte
	GroupID         string
	DedupID         string
	Priority        int
	ReceiveCount    int
	SentAt          time.Time
	FirstReceivedAt time.Time // zero when never received
	VisibleAt       time.Time // its visibility deadline
	Held            bool      // in flight now
}

// QueueSummary is one queue as QueueSummaries reads it.
type QueueSummary struct {
	Queue          QueueRecord
	Counts         Counts
	OldestSentAt   time.Time // zero for an empty queue
	GroupsInFlight int
}
