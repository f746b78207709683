// Package driver is sqlmailbox's driver interface: the half of sqlmailbox
// that one database's package (sqlmailbox/sqlite, sqlmailbox/postgres)
// implements and package sqlmailbox calls. Like River's riverdriver it is
// not user API: it is internal, so user code can neither implement nor call
// it, and it changes whenever sqlmailbox needs it to.
//
// What is here and what is there: package sqlmailbox checks every request
// (sqsloop's request rules, the queue's own), rounds durations, makes
// message IDs and receipt handles, encodes message attributes, maps
// outcomes to errors, runs long polls and wakes those of its own process; a
// Driver stores and finds rows, each method in one transaction (Receive and
// Sweep in a few: see theirs), atomically, reports what it found, and wakes
// the long polls of other processes where its database can (postgres:
// NOTIFY). Times: now is the caller's clock; a
// driver whose database several machines share (postgres) uses the
// database's clock instead, so that every machine agrees on when a lease
// ends. The durations of requests (visibility timeouts, delays) arrive
// rounded to whole seconds; the sweep's retentions arrive as configured.
package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Driver is one database's half of sqlmailbox.
//
// Every method is safe for concurrent use. Errors: one wrapping
// sqsloop.ErrQueueNotFound for a queue that does not exist where the
// method names one; ctx's error when ctx ends first; anything else is the
// database's, transient unless it wraps sqsloop.ErrAccessDenied.
type Driver interface {
	// Dialect names the database, "sqlite" or "postgres", for errors.
	Dialect() string

	// SchemaVersion returns the version of the database's sqlmailbox
	// schema (0 when it has none) and the version this driver needs. It
	// only reads: it takes no write lock and needs no privilege beyond
	// SELECT on the schema's version table.
	SchemaVersion(ctx context.Context) (have, want int, err error)

	// DefaultPollInterval is how often a long poll looks at the database
	// when nothing woke it, unless the Store's Config says otherwise: what
	// bounds the delay of a message made visible by another process the
	// driver cannot hear of.
	DefaultPollInterval() time.Duration

	// Close releases what the driver opened. Calls after Close fail.
	Close() error

	// CreateQueue inserts q (ID and CreatedAt unset) unless a queue of its
	// name exists, and returns the stored queue either way (the caller
	// compares the attributes).
	CreateQueue(ctx context.Context, q QueueRecord) (QueueRecord, error)
	// LoadQueue returns the queue of that name, or ErrQueueNotFound.
	LoadQueue(ctx context.Context, name string) (QueueRecord, error)
	// DeleteQueue deletes the queue and its messages; ErrQueueNotFound when
	// it does not exist, sqlmailbox.ErrQueueInUse when another queue's
	// redrive policy names it.
	DeleteQueue(ctx context.Context, name string) error
	// PurgeQueue deletes every message of the queue (visible, in flight,
	// delayed) and returns how many; ErrQueueNotFound when it does not
	// exist.
	PurgeQueue(ctx context.Context, name string) (int, error)
	// Exists reports whether the queue still exists.
	Exists(ctx context.Context, q *QueueRecord) (bool, error)

	// Send stores msgs (MessageID set by the caller; on a FIFO queue the
	// deduplication ID too), each visible after its Delay, and returns one
	// outcome per message: on a FIFO queue its sequence number, and a
	// message whose deduplication ID was stored within
	// sqlmailbox.DeduplicationWindow is not stored again and reports the
	// first message's ID and sequence number as a duplicate, also within
	// one call. It wakes the queue's long polls in other processes where
	// the database can. ErrQueueNotFound when the queue was deleted.
	Send(ctx context.Context, q *QueueRecord, now time.Time, msgs []NewMessage) ([]SendOutcome, error)

	// Receive takes up to r.Max visible messages (a visibility deadline at
	// or before now: never received, delayed until then, nacked, or whose
	// lease lapsed), atomically, so that no two calls take one message:
	// each taken message gets one more receive count, a lease until now +
	// r.Visibility, its first receive time if it had none, and r.Receiver
	// as its holder. On a FIFO queue it takes nothing from a message group
	// with a message in flight, and from any other group only the visible
	// messages at its head, in order, one group after another, oldest
	// group first: as many of one group as it can before the next. A
	// message already received q.Spec.MaxReceiveCount times (with a DLQ) is
	// moved to the DLQ, keeping its row, ID and counts, and an audit row
	// says so, instead of being taken, and takes no place among the r.Max;
	// the DLQ's long polls in other processes are woken where the database
	// can. It looks at the messages at or after r.From (where the driver
	// uses positions; see ReceiveArgs.From). When it takes nothing it
	// reports whether visible messages were held by others
	// (ReceiveResult.Busy) and, when r.Next asks, when to look again
	// (NextVisible), or ErrQueueNotFound when the queue no longer exists.
	// A receive that fails may have held messages while it ran; they are
	// visible again. It may take its messages in several short
	// transactions (postgres: when some went to the DLQ), never holding
	// one's locks into the next.
	Receive(ctx context.Context, q *QueueRecord, r ReceiveArgs) (ReceiveResult, error)

	// Delete deletes the message of each ref whose row and receive count
	// match (and, on a FIFO queue, whose lease has not ended: a FIFO
	// receipt handle expires with its lease), in order, copying it to the
	// archive table first when archive is true; deleted[i] reports whether
	// refs[i] deleted one (a ref given twice deletes once). On a FIFO queue
	// a delete may free its group: it wakes the queue's long polls in other
	// processes where the database can.
	Delete(ctx context.Context, q *QueueRecord, now time.Time, refs []Ref, archive bool) (deleted []bool, err error)

	// ChangeVisibility applies the changes in order, each on the message as
	// the changes before it left it: a change sets the lease of its
	// message to now + Timeout when its row and receive count match, it is
	// in flight, and the new deadline is not past 12 hours
	// (sqsloop.MaxVisibilityTimeout) after the receive; a Timeout of 0
	// makes it visible and no longer leased (and so no longer in flight for
	// a later change). It reports each change's outcome, and sooner: some
	// message's visibility deadline moved earlier (a nack, a shortened
	// lease), which wakes the queue's long polls in other processes where
	// the database can.
	ChangeVisibility(ctx context.Context, q *QueueRecord, now time.Time, changes []Change) (out []ChangeOutcome, sooner bool, err error)

	// Counts returns the queue's messages by state; ErrQueueNotFound when
	// the queue was deleted. It only reads.
	Counts(ctx context.Context, q *QueueRecord, now time.Time) (Counts, error)

	// RecordFailure adds an audit row for the message of ref and marks it
	// no longer leased (its visibility timeout is now a back-off, not a
	// lease that may lapse). A ref that matches no message still adds the
	// row.
	RecordFailure(ctx context.Context, q *QueueRecord, now time.Time, ref Ref, rec AuditRow) error
	// Audit returns the newest audit rows, newest first: of one queue, or
	// of every queue when queue is "". It only reads.
	Audit(ctx context.Context, queue string, limit int) ([]AuditRow, error)
	// Archived returns the newest archived messages of the queue, newest
	// first. It only reads.
	Archived(ctx context.Context, queue string, limit int) ([]ArchivedRow, error)

	// The sweep, in steps: package sqlmailbox runs them, each step one
	// transaction that handles at most limit rows, with its policy (how
	// many rows, how long between steps) written once there. A step that
	// meets a row another transaction holds waits for it (postgres: in the
	// order of the rows' keys, as every statement that locks messages),
	// so no row is passed over; it rechecks the row once it holds it.

	// SweepQueues lists every queue as a sweep sees it, with now (the
	// caller's clock; postgres: the database's).
	SweepQueues(ctx context.Context, now time.Time) ([]SweepQueue, error)
	// SweepLapsed handles, in one transaction, up to limit of q's leases
	// that lapsed (leased, deadline after q.SweptAt and at or before q.Now)
	// and that no receive took again, past from in the order of priority
	// (highest first), deadline and id: each is marked no longer leased
	// and audited ("lease expired"), or moved to the DLQ and audited when
	// its receive count reached q.MaxReceiveCount (with a DLQ). It returns
	// what it did and where the next step starts (Done once every priority
	// was looked at).
	SweepLapsed(ctx context.Context, q *SweepQueue, from LapsedCursor, limit int) (LapsedStep, error)
	// MarkSwept records that q's lapses up to q.Now were handled (never
	// moving the mark back), in a transaction of its own.
	MarkSwept(ctx context.Context, q *SweepQueue) error
	// SweepRetention deletes, in one transaction, up to limit of q's
	// oldest messages sent before q.Now - q.Retention, auditing each, and
	// reports how many and whether more may be left (it met no message
	// within the retention period).
	SweepRetention(ctx context.Context, q *SweepQueue, limit int) (deleted int, more bool, err error)
	// Trim deletes, in one transaction, up to limit rows of the table t
	// older than age at now (the caller's clock; postgres: the database's),
	// and reports how many; a short count means none is left.
	Trim(ctx context.Context, t Table, now time.Time, age time.Duration, limit int) (int, error)
	// TrimDedup forgets, in one transaction, the deduplication IDs that
	// expired by now (the caller's clock; postgres: the database's) among
	// the next limit IDs after from (in key order),
	// and reports how many and where the next step starts (Done at the
	// end): a pass over the table, limit IDs a step.
	TrimDedup(ctx context.Context, now time.Time, from DedupCursor, limit int) (pruned int, next DedupCursor, err error)

	// InFlight returns up to limit messages of q that a receive holds
	// (leased, not nacked nor recorded as failed): lease deadline ahead,
	// or passed without a new receive or a sweep taking it (PastDeadline),
	// the earliest deadline first, each with its holder's receiver row
	// when that still exists. It only reads.
	InFlight(ctx context.Context, q *QueueRecord, now time.Time, limit int) ([]InFlightRow, error)
	// LeaseStats returns the messages of q a receive holds now (deadline
	// ahead, and past), and since since (a whole hour): the acked ones by
	// receive count (the tally AddAcked keeps), the dead-lettered ones by
	// receive count and the lapsed leases and reported failures (the
	// audit table's). It only reads.
	LeaseStats(ctx context.Context, q *QueueRecord, now, since time.Time) (LeaseStatsRow, error)

	// AddAcked adds counts to the tally of acked messages (each count to
	// its queue's, hour's and receive count's row), in one transaction,
	// skipping the counts of queues deleted meanwhile.
	AddAcked(ctx context.Context, counts []AckedCount) error

	// RegisterReceiver inserts the receiver row r or, when a row of its ID
	// exists, sets that row's last-seen time (the renewal: a row a sweep
	// deleted comes back); RemoveReceiver deletes it; Receivers lists every
	// receiver row with the messages its receives hold in flight now (it
	// only reads).
	RegisterReceiver(ctx context.Context, r ReceiverRow) error
	RemoveReceiver(ctx context.Context, id string) error
	Receivers(ctx context.Context, now time.Time) ([]ReceiverRow, error)
}

// Notifier is implemented by a Driver whose database can wake a long poll
// of one process when another process makes a message visible (postgres:
// LISTEN/NOTIFY). A Store runs Listen on a goroutine of its own, from the
// first long poll until Close, again after a failure (its long polls fall
// back to polling every poll interval meanwhile).
type Notifier interface {
	// Listen calls wake with a queue's ID and how many of its messages may
	// have turned visible (-1 when not known) each time another Store
	// announces some, until ctx ends (it then returns ctx's error) or the
	// connection fails (it returns that error); the driver's own
	// announcements it leaves out (its Store wakes its long polls itself).
	// It calls ready once it listens: a wake-up sent from then on reaches
	// it.
	Listen(ctx context.Context, ready func(), wake func(queueID int64, n int)) error
}

// open is sqlmailbox's constructor of a Store, set by SetOpen.
var open any

// SetOpen registers f, package sqlmailbox's constructor of a Store, for
// Open. Package sqlmailbox calls it once, from its init: it imports this
// package, so this package cannot name it.
func SetOpen[C, S any](f func(ctx context.Context, d Driver, cfg C) (S, error)) { open = f }

// Open returns a Store on d with cfg (C is sqlmailbox.Config, S
// *sqlmailbox.Store), through the constructor package sqlmailbox
// registered: how sqlmailbox/sqlite and sqlmailbox/postgres make their
// Stores. It closes d when it fails.
func Open[C, S any](ctx context.Context, d Driver, cfg C) (S, error) {
	return open.(func(context.Context, Driver, C) (S, error))(ctx, d, cfg)
}

// QueueRecord is a queue as the database stores it.
type QueueRecord struct {
	// ID is the database's key of the queue.
	ID int64
	// Spec holds the queue's attributes, with defaults applied
	// (sqsloop.QueueSpec.WithDefaults); MaxReceiveCount is above 0 only with
	// a dead-letter queue.
	Spec sqsloop.QueueSpec
	// DeadLetterQueueID and DeadLetterQueue are the dead-letter queue's ID
	// and name; 0 and "" without a redrive policy.
	DeadLetterQueueID int64
	DeadLetterQueue   string
	// Key signs the queue's receipt handles (HMAC-SHA-256), so that the
	// queue tells a handle it issued from any other string: 32 random
	// bytes, made when the queue is created.
	Key []byte
	// CreatedAt is when the queue was created.
	CreatedAt time.Time
}

// NewMessage is a message for Driver.Send, checked and encoded.
type NewMessage struct {
	MessageID  string
	Body       string
	Attributes []byte // encoded message attributes; nil for none
	GroupID    string // "" for none
	DedupID    string // FIFO queues only
	Delay      time.Duration
	Priority   int // sqsloop.MinPriority–MaxPriority; 0 on a queue without priorities
}

// SendOutcome is Driver.Send's result for one message.
type SendOutcome struct {
	// MessageID is the stored message's ID: the one sent, or the first
	// message's for a duplicate.
	MessageID string
	// Duplicate reports a FIFO send deduplicated within the window.
	Duplicate bool
	// Seq is, on a FIFO queue, the stored message's row key (ReceivedRow.ID:
	// its sequence number), or the first message's for a duplicate; 0 on a
	// standard queue.
	Seq int64
}

// MaxReceive is the most messages one Driver.Receive takes: the receives
// of several callers of a Mailbox together, 100.
const MaxReceive = 100

// ReceiveArgs are Driver.Receive's arguments.
type ReceiveArgs struct {
	Now        time.Time
	Max        int           // 1–MaxReceive: the receives of several callers together (a FIFO queue's: 1–10)
	Visibility time.Duration // whole seconds, 0–12 h
	Receiver   string        // receiver ID of the receiving Mailbox
	// DeadLetterReason is the Reason of the audit row of a message moved to
	// the DLQ: DeadLetterReason of the queue's redrive policy, made once per
	// Mailbox.
	DeadLetterReason string
	// From, when not zero, is where the receive may begin to look in the
	// queue's order of delivery (a Position a receive reported): a driver
	// that keeps that order in an index (postgres, on a standard queue
	// without priorities) skips what lies before it there (index entries
	// of messages taken, acked or still in flight, which an old snapshot
	// keeps alive). Zero: the whole queue.
	From Position
	// Next asks, when the receive takes nothing, for
	// ReceiveResult.NextVisible.
	Next bool
	// SkipGroups, on a standard queue, are message groups none of whose
	// messages the receive takes (sqsloop.GroupSkipper); their visible
	// messages do not make the queue Busy, and the receive reports no
	// From (it passed over messages it did not take). Ignored on a FIFO
	// queue. At most sqsloop.MaxSkipGroups, none empty.
	SkipGroups []string
}

// Position is a place in a standard queue's order of delivery: a
// visibility deadline, then a row key. Zero is before every message.
type Position struct {
	At time.Time
	ID int64
}

// IsZero reports whether p is before every message.
func (p Position) IsZero() bool { return p.At.IsZero() && p.ID == 0 }

// Before reports whether p is before q in a queue's order of delivery.
func (p Position) Before(q Position) bool {
	return p.At.Before(q.At) || (p.At.Equal(q.At) && p.ID < q.ID)
}

// ReceiveResult is what Driver.Receive took.
type ReceiveResult struct {
	Rows []ReceivedRow
	// DeadLettered counts the messages moved to the DLQ instead.
	DeadLettered int
	// From is where the next receive may begin to look (ReceiveArgs.From):
	// the place the first message this one took (or moved to the DLQ) had
	// before it was taken, when the driver uses positions; zero otherwise.
	// Every message before it that was visible and not being taken by
	// another receive at the time was taken.
	From Position
	// Busy reports, when Rows is empty, that visible messages were there
	// (at or after ReceiveArgs.From) that other transactions held (other
	// receives taking them, an ack, a sweep): they are taken, or visible
	// again, once those end.
	Busy bool
	// NextVisible is, when Rows is empty and ReceiveArgs.Next asked for
	// it, when a message may next be visible, on the caller's clock: the
	// earliest visibility deadline after the receive; zero when no message
	// is hidden (or when Rows is not empty, or it was not asked for).
	NextVisible time.Time
}

// ReceivedRow is one message taken by Driver.Receive, as it is after the
// receive.
type ReceivedRow struct {
	ID              int64 // row key; the FIFO sequence number
	MessageID       string
	Body            string
	Attributes      []byte
	GroupID         string
	DedupID         string
	ReceiveCount    int
	SentAt          time.Time
	FirstReceivedAt time.Time
}

// Ref names one receive of one message: what a receipt handle carries.
type Ref struct {
	ID           int64
	ReceiveCount int
}

// Change is one entry of Driver.ChangeVisibility.
type Change struct {
	Ref
	Timeout time.Duration // whole seconds, 0–12 h
}

// ChangeOutcome is Driver.ChangeVisibility's result for one change.
type ChangeOutcome uint8

const (
	// Changed: the lease was set.
	Changed ChangeOutcome = iota
	// Stale: no message in flight matches the ref (deleted, received again,
	// no longer in flight, or nacked by an earlier change of the batch).
	Stale
	// PastCeiling: the new deadline lies past 12 hours after the receive;
	// nothing changed.
	PastCeiling
)

// Counts are a queue's messages by state.
type Counts struct {
	Visible  int // visibility deadline reached
	InFlight int // received, deadline ahead
	Delayed  int // never received, delay not ended
}

// AuditRow is one row of the audit table.
type AuditRow struct {
	Queue        string
	MessageID    string
	ReceiveCount int
	Kind         string // a sqlmailbox.AuditKind
	Reason       string
	At           time.Time
}

// ArchivedRow is one row of the archive table: an acked message with its
// attributes still encoded.
type ArchivedRow struct {
	Queue        string
	MessageID    string
	Body         string
	Attributes   []byte
	GroupID      string
	ReceiveCount int
	SentAt       time.Time
	DeletedAt    time.Time
}

// ReceiverRow is one row of the receiver registry, with what Receivers
// adds: how long ago it was seen, on the database's clock (postgres) or
// the caller's (sqlite), and the messages it holds in flight.
type ReceiverRow struct {
	ID                  string
	Queue               string
	Host                string
	PID                 int
	StartedAt, LastSeen time.Time
	SinceSeen           time.Duration
	InFlight            int
}

// InFlightRow is one message Driver.InFlight found held.
type InFlightRow struct {
	MessageID    string
	GroupID      string
	ReceiveCount int
	SentAt       time.Time
	ReceivedAt   time.Time // the receive that holds it
	Deadline     time.Time // its visibility deadline
	ExtendedAt   time.Time // its last extension; zero for none since the receive
	// SinceRenewed is how long ago the lease was last set (the receive or
	// the last extension), on the database's clock (postgres) or the
	// caller's (sqlite).
	SinceRenewed time.Duration
	PastDeadline bool
	// Receiver is the holder's receiver row (InFlight unset); only its ID
	// when HasReceiver is false (the row is gone).
	Receiver    ReceiverRow
	HasReceiver bool
}

// AckedCount is a number of messages of one queue acked within one hour
// (Hour, its start, of UTC) at one receive count.
type AckedCount struct {
	QueueID      int64
	Hour         time.Time
	ReceiveCount int
	Messages     int64
}

// Tally is a number of messages by receive count.
type Tally struct {
	ReceiveCount int
	Messages     int64
}

// LeaseStatsRow is what Driver.LeaseStats found.
type LeaseStatsRow struct {
	InFlight, PastDeadline  int
	Acked, DeadLettered     []Tally // by receive count, ascending
	LeasesExpired, Failures int
}

// Add adds one row of a dialect's lease-stats query to s: what is
// "in-flight", "past-deadline", "lease-expired" or "failure" (n of them;
// count unused), or "acked" or "dead-lettered" (n messages of receive
// count count). A row of another kind is ignored.
func (s *LeaseStatsRow) Add(what string, count int, n int64) {
	switch what {
	case "in-flight":
		s.InFlight = int(n)
	case "past-deadline":
		s.PastDeadline = int(n)
	case "lease-expired":
		s.LeasesExpired = int(n)
	case "failure":
		s.Failures = int(n)
	case "acked":
		s.Acked = append(s.Acked, Tally{count, n})
	case "dead-lettered":
		s.DeadLettered = append(s.DeadLettered, Tally{count, n})
	}
}

// SweepQueue is a queue as a sweep sees it.
type SweepQueue struct {
	ID                int64
	Name              string
	DeadLetterQueueID int64 // 0 without a redrive policy
	DeadLetterQueue   string
	MaxReceiveCount   int
	Retention         time.Duration
	Priority          bool
	// SweptAt is how far the queue's sweeps handled its lapsed leases:
	// every deadline up to it.
	SweptAt time.Time
	// Now is the sweep's time for this queue: the caller's, or (postgres)
	// the database's.
	Now time.Time
}

// LapsedCursor is where a step of SweepLapsed starts: the priority whose
// leases it looks at and, once it has looked at some of them, the last
// one's deadline and id.
type LapsedCursor struct {
	Priority int
	Deadline time.Time // zero: from q.SweptAt
	ID       int64
	Done     bool
}

// FirstLapsed is where a queue's SweepLapsed steps start.
func FirstLapsed(q *SweepQueue) LapsedCursor {
	if q.Priority {
		return LapsedCursor{Priority: sqsloop.MaxPriority}
	}
	return LapsedCursor{}
}

// NextPriority is where the steps go on once the priority of c is done:
// the next lower priority of a queue with priorities, else Done.
func (c LapsedCursor) NextPriority(q *SweepQueue) LapsedCursor {
	if !q.Priority || c.Priority == sqsloop.MinPriority {
		return LapsedCursor{Done: true}
	}
	return LapsedCursor{Priority: c.Priority - 1}
}

// LapsedStep is what a step of SweepLapsed did.
type LapsedStep struct {
	// Recovered were marked no longer leased, Failed moved to the DLQ:
	// both lapses found.
	Recovered, Failed int
	Next              LapsedCursor
}

// DedupCursor is where a step of TrimDedup starts: after the ID (of the
// queue) it looked at last; the zero value starts at the beginning.
type DedupCursor struct {
	QueueID int64
	ID      string
	Done    bool
}

// Table is a table a sweep trims.
type Table uint8

// The tables Trim trims, and the time it reads of each row.
const (
	AuditTable    Table = iota // when the audited event happened
	ArchiveTable               // when the archived message was acked
	AckedTable                 // the start of the acked tally's hour
	ReceiverTable              // when the receiver was last seen
)

// ReasonLeaseExpired is the Reason of a lease-expired audit row.
const ReasonLeaseExpired = "the visibility timeout ended without an ack or a nack: visible again"

// DeadLetterReason returns the Reason of a dead-lettered audit row, the
// same from Receive and from Sweep, on either database: the redrive
// policy's maxReceiveCount and the dead-letter queue's name.
func DeadLetterReason(maxReceiveCount int, deadLetterQueue string) string {
	return fmt.Sprintf("reached maxReceiveCount %d: moved to dead-letter queue %q", maxReceiveCount, deadLetterQueue)
}

// RetentionReason returns the Reason of a retention audit row: the
// queue's retention period.
func RetentionReason(retention time.Duration) string {
	return fmt.Sprintf("older than the queue's retention period (%v): deleted", retention)
}
