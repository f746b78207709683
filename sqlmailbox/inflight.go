package sqlmailbox

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// InFlightMessage is one message a receive holds: what the lease-and-
// recovery system knows of it, for an operator asking what is held and by
// whom.
type InFlightMessage struct {
	// MessageID and MessageGroupID are the message's ("" for no group).
	MessageID      string
	MessageGroupID string
	// ReceiveCount counts its receives, the one that holds it included.
	ReceiveCount int
	// SentAt is when it was sent; ReceivedAt when the receive that holds it
	// took it (its lease's start).
	SentAt, ReceivedAt time.Time
	// LeaseDeadline is when its visibility timeout ends, or ended.
	LeaseDeadline time.Time
	// ExtendedAt is when its lease was last changed by a ChangeVisibility
	// that kept it in flight (the lease owner extends only while the
	// handler beats); zero when it has not been since the receive.
	ExtendedAt time.Time
	// SinceRenewed is how long ago its lease was last set (the receive or
	// the last extension): the time since the handler's last heartbeat
	// reached the database, give or take the lease owner's interval. By
	// the database's clock (postgres) or this process's (sqlite).
	SinceRenewed time.Duration
	// PastDeadline reports a lease that lapsed (its deadline passed without
	// an ack, a nack or an extension) and that neither a receive nor a
	// sweep has taken since: the message is visible again, and its holder
	// has lost it, whether or not it knows.
	PastDeadline bool
	// Receiver is the holder: the row of the receiver registry of the
	// Mailbox whose receive took it (host, PID, alive; InFlight not
	// counted), or only its ID when the row is gone (its Mailbox closed,
	// or a sweep removed a dead one).
	Receiver Receiver
}

// InFlight lists up to limit (at least 1) messages of the queue named that
// a receive holds in flight, the earliest lease deadline first: those
// whose lease lapsed unnoticed (PastDeadline) before the others. A message
// nacked to visibility 0 is visible, not held; one whose failure was
// recorded (Mailbox.RecordFailure) waits out a back-off held by no one and
// is not listed, though SQS's count (QueueAttributes'
// ApproximateMessagesInFlight) includes it. (A nack to a longer
// visibility timeout without RecordFailure cannot be told from an
// extension: it is listed.) It only reads the database (on
// SQLite it takes no write lock), every message of the queue: an
// operator's call, not one for every receive.
//
// Errors: sqsloop.ErrInvalidArgument for a limit below 1;
// sqsloop.ErrQueueNotFound when the queue does not exist;
// sqsloop.ErrMailboxClosed after Close; ctx's error; or the database's.
// Safe for concurrent use.
func (s *Store) InFlight(ctx context.Context, queue string, limit int) ([]InFlightMessage, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: sqlmailbox: InFlight: limit must be at least 1, got %d", sqsloop.ErrInvalidArgument, limit)
	}
	q, err := s.load(ctx, "InFlight", queue)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rows, err := s.d.InFlight(ctx, &q, now, limit)
	if err != nil {
		return nil, s.callError(ctx, "list the messages in flight of", queue, err)
	}
	out := make([]InFlightMessage, len(rows))
	for i, r := range rows {
		out[i] = InFlightMessage{MessageID: r.MessageID, MessageGroupID: r.GroupID, ReceiveCount: r.ReceiveCount, SentAt: r.SentAt,
			ReceivedAt: r.ReceivedAt, LeaseDeadline: r.Deadline, ExtendedAt: r.ExtendedAt, SinceRenewed: r.SinceRenewed,
			PastDeadline: r.PastDeadline, Receiver: Receiver{ID: r.Receiver.ID}}
		if r.HasReceiver {
			out[i].Receiver = s.receiver(r.Receiver)
		}
	}
	return out, nil
}

// ReceiveCountTally is a number of messages that had one receive count.
type ReceiveCountTally struct {
	// ReceiveCount is the count: 1 for a message handled at its first
	// delivery.
	ReceiveCount int
	// Messages is how many had it.
	Messages int64
}

// LeaseStats are one queue's lease-and-recovery figures: what receives hold
// now, and how its messages ended since a time.
type LeaseStats struct {
	// Queue is the queue's name.
	Queue string
	// Since is the start of the period the counts below cover: the time
	// asked for, rounded down to the hour (of UTC), since the acked tally
	// is kept per hour.
	Since time.Time
	// InFlight counts the messages a receive holds, their lease deadline
	// ahead; PastDeadline those whose lease lapsed and that neither a
	// receive nor a sweep has taken since (as InFlight lists them).
	InFlight, PastDeadline int
	// Acked counts the messages acked, by the receive count they had at
	// the ack; DeadLettered the messages moved to the dead-letter queue, by
	// receive count (the redrive policy's maxReceiveCount, or more for
	// messages received again before a sweep found them). Both by
	// ascending receive count, counts that no message had left out.
	Acked, DeadLettered []ReceiveCountTally
	// LeasesExpired counts the lapsed leases sweeps found and recovered
	// (made visible again, not moved to the DLQ: those are in
	// DeadLettered), Failures the failures the consumer reported
	// (Mailbox.RecordFailure): the audit table's rows of those kinds.
	LeasesExpired, Failures int
}

// LeaseStats returns the lease-and-recovery figures of the queue named: the
// messages held now, and since since (rounded down to the hour; counts
// older than Config.AuditRetention are gone) the acked and dead-lettered
// ones by receive count, the leases sweeps recovered and the failures
// reported.
//
// Acks are counted by the Store whose Mailbox acked them, and added to the
// database's tally, per hour, a second later at most (and at Store.Close),
// not by each ack's own statement, which cost a tenth of the database's
// CPU per message: this Store's own acks are added before it reads, other
// processes' may be a second late, and a process that dies loses its last
// second's counts. The rest comes from the messages and the audit table,
// read in one snapshot; it reads every message of the queue for the held
// counts: call it for a dashboard or a metric every minute or so, not for
// every receive. It writes nothing but this Store's counts of acks (on
// SQLite, with none held, it takes no write lock).
//
// Errors: sqsloop.ErrQueueNotFound when the queue does not exist;
// sqsloop.ErrMailboxClosed after Close; ctx's error; or the database's.
// Safe for concurrent use.
func (s *Store) LeaseStats(ctx context.Context, queue string, since time.Time) (LeaseStats, error) {
	q, err := s.load(ctx, "LeaseStats", queue)
	if err != nil {
		return LeaseStats{}, err
	}
	since = since.UTC().Truncate(time.Hour)
	if err := s.acks.flush(ctx); err != nil {
		return LeaseStats{}, s.callError(ctx, "read the lease stats of", queue, err)
	}
	r, err := s.d.LeaseStats(ctx, &q, time.Now(), since)
	if err != nil {
		return LeaseStats{}, s.callError(ctx, "read the lease stats of", queue, err)
	}
	return LeaseStats{Queue: queue, Since: since, InFlight: r.InFlight, PastDeadline: r.PastDeadline,
		Acked: tallies(r.Acked), DeadLettered: tallies(r.DeadLettered), LeasesExpired: r.LeasesExpired, Failures: r.Failures}, nil
}

// tallies returns ts sorted by receive count, as the API's type.
func tallies(ts []driver.Tally) []ReceiveCountTally {
	out := make([]ReceiveCountTally, len(ts))
	for i, t := range ts {
		out[i] = ReceiveCountTally{ReceiveCount: t.ReceiveCount, Messages: t.Messages}
	}
	slices.SortFunc(out, func(a, b ReceiveCountTally) int { return cmp.Compare(a.ReceiveCount, b.ReceiveCount) })
	return out
}

// load returns the stored queue of that name, for the Store call op.
func (s *Store) load(ctx context.Context, op, queue string) (driver.QueueRecord, error) {
	if err := s.check(op); err != nil {
		return driver.QueueRecord{}, err
	}
	q, err := s.d.LoadQueue(ctx, queue)
	if err != nil {
		return driver.QueueRecord{}, s.callError(ctx, "open queue", queue, err)
	}
	return q, nil
}
