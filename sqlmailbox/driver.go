package sqlmailbox

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Driver is one database's half of sqlmailbox: the SQL of one dialect and
// its connection, behind the operations this package's semantics need. The
// packages sqlmailbox/sqlite and sqlmailbox/postgres implement it, each the
// only package that imports its database driver, so a program compiles the
// database it uses and no other. A user never calls a Driver; Open takes one
// from those packages' Open functions.
//
// What is here and what is there: this package checks every request
// (sqsloop's request rules, the queue's own), rounds durations, makes message
// IDs and receipt handles, encodes message attributes, maps outcomes to
// errors and runs long polls; a Driver stores and finds rows, each method in
// one transaction, atomically, and reports what it found. Times: now is the
// caller's clock; a driver whose database several machines share (postgres)
// uses the database's clock instead, so that every machine agrees on when a
// lease ends. The durations of requests (visibility timeouts, delays)
// arrive rounded to whole seconds; SweepArgs' retentions arrive as
// configured.
//
// Every method is safe for concurrent use. Errors: ErrQueueNotFound (wrapped)
// for a queue that does not exist where the method names one; ctx's error
// when ctx ends first; anything else is the database's, transient unless
// said otherwise.
type Driver interface {
	// Dialect names the database, "sqlite" or "postgres", for errors and
	// worker rows.
	Dialect() string

	// Migrate creates the schema, or brings it up to the driver's version,
	// holding the database's lock so that two processes never migrate at
	// once. A database whose schema is newer than the driver knows fails
	// with an error wrapping ErrSchemaTooNew, and is left as it is.
	Migrate(ctx context.Context) error

	// PollInterval is how often a long poll looks at the database when
	// nothing woke it: what bounds the delay of a message sent by another
	// process that the driver cannot hear of.
	PollInterval() time.Duration

	// Close releases the connections. Calls after Close fail.
	Close() error

	// CreateQueue inserts q (ID and CreatedAt unset) unless a queue of its
	// name exists, and returns the stored queue either way (the caller
	// compares the attributes).
	CreateQueue(ctx context.Context, q QueueRecord) (QueueRecord, error)
	// LoadQueue returns the queue of that name, or ErrQueueNotFound.
	LoadQueue(ctx context.Context, name string) (QueueRecord, error)
	// DeleteQueue deletes the queue and its messages; ErrQueueNotFound when
	// it does not exist, ErrQueueInUse when another queue's redrive policy
	// names it.
	DeleteQueue(ctx context.Context, name string) error

	// Send stores msgs (MessageID set by the caller; on a FIFO queue the
	// deduplication ID too), each visible after its Delay, and returns one
	// outcome per message: on a FIFO queue its sequence number, and a
	// message whose deduplication ID was stored within DeduplicationWindow
	// is not stored again and reports the first message's ID and sequence
	// number as a duplicate, also within one call. It wakes
	// the queue's long polls in other processes where the database can.
	// ErrQueueNotFound when the queue was deleted.
	Send(ctx context.Context, q *QueueRecord, now time.Time, msgs []NewMessage) ([]SendOutcome, error)

	// Receive takes up to r.Max visible messages (a visibility deadline at
	// or before now: never received, delayed until then, nacked, or whose
	// lease lapsed), atomically, so that no two calls take one message:
	// each taken message gets one more receive count, a lease until now +
	// r.Visibility, its first receive time if it had none, and r.Worker as
	// its holder. On a FIFO queue it takes nothing from a message group
	// with a message in flight, and from any other group only the visible
	// messages at its head, in order. A message already received
	// q.Spec.MaxReceiveCount times (with a DLQ) is moved to the DLQ,
	// keeping its row, ID and counts, and an audit row says so, instead of
	// being taken. When it takes nothing it reports, in the same
	// statement or transaction, the earliest future visibility deadline of
	// the queue's messages (ReceiveResult.NextVisible, for a long poll to
	// sleep until), or ErrQueueNotFound when the queue no longer exists.
	Receive(ctx context.Context, q *QueueRecord, r ReceiveArgs) (ReceiveResult, error)

	// Exists reports whether the queue still exists.
	Exists(ctx context.Context, q *QueueRecord) (bool, error)

	// Delete deletes the message of each ref whose row and receive count
	// match (and, on a FIFO queue, whose lease has not ended: a FIFO
	// receipt handle expires with its lease), copying it to the archive
	// table first when archive is true; deleted[i] reports whether refs[i]
	// deleted one.
	Delete(ctx context.Context, q *QueueRecord, now time.Time, refs []Ref, archive bool) (deleted []bool, err error)

	// ChangeVisibility sets the lease of each change's message to now +
	// Timeout when its row and receive count match, it is in flight, and
	// the new deadline is not past 12 hours (sqsloop.MaxVisibilityTimeout)
	// after the receive; a Timeout of 0 makes it visible and no longer
	// leased. It reports each change's outcome and wakes long polls of
	// other processes when a message turned visible.
	ChangeVisibility(ctx context.Context, q *QueueRecord, now time.Time, changes []Change) ([]ChangeOutcome, error)

	// Counts returns the queue's messages by state; ErrQueueNotFound when
	// the queue was deleted.
	Counts(ctx context.Context, q *QueueRecord, now time.Time) (Counts, error)

	// RecordFailure adds an audit row for the message of ref and marks it
	// no longer leased (its visibility timeout is now a back-off, not a
	// lease that may lapse). A ref that matches no message still adds the
	// row.
	RecordFailure(ctx context.Context, q *QueueRecord, now time.Time, ref Ref, rec AuditRecord) error
	// Audit returns the newest audit rows, newest first: of one queue, or
	// of every queue when queue is "".
	Audit(ctx context.Context, queue string, limit int) ([]AuditRecord, error)
	// Archived returns the newest archived messages of the queue, newest
	// first.
	Archived(ctx context.Context, queue string, limit int) ([]ArchivedRow, error)

	// Sweep does, for every queue, what no receive does: leases that lapsed
	// since the queue's last sweep are marked no longer leased and audited
	// ("expired found"), and moved to the DLQ when their receive count has
	// reached the redrive policy's; messages older than the queue's
	// retention period are deleted (and audited); expired deduplication IDs
	// are forgotten; audit and archive rows older than their retention and
	// worker rows not seen for a.WorkerRetention are deleted.
	Sweep(ctx context.Context, a SweepArgs) (SweepStats, error)

	// RegisterWorker inserts the worker row w or, when a row of its ID
	// exists, sets that row's last-seen time (the renewal: a row a sweep
	// deleted comes back); RemoveWorker deletes it; Workers lists every
	// worker row with the messages its receives hold in flight now.
	RegisterWorker(ctx context.Context, w Worker) error
	RemoveWorker(ctx context.Context, id string) error
	Workers(ctx context.Context, now time.Time) ([]Worker, error)
}

// Notifier is implemented by a Driver whose database can wake a long poll
// of one process when another process makes a message visible (postgres:
// LISTEN/NOTIFY). A Store runs Listen on a goroutine of its own, from the
// first long poll until Close, again after a failure (its long polls fall
// back to polling every PollInterval meanwhile).
type Notifier interface {
	// Listen calls wake with a queue's ID each time a message of that queue
	// may have turned visible, until ctx ends (it then returns ctx's error)
	// or the connection fails (it returns that error). It calls ready once
	// it listens: a wake-up sent from then on reaches it.
	Listen(ctx context.Context, ready func(), wake func(queueID int64)) error
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

// ReceiveArgs are Driver.Receive's arguments.
type ReceiveArgs struct {
	Now        time.Time
	Max        int           // 1–10
	Visibility time.Duration // whole seconds, 0–12 h
	Worker     string        // worker ID of the receiving Mailbox
	// DeadLetterReason is the Reason of the audit row of a message moved to
	// the DLQ: DeadLetterReason of the queue's redrive policy, made once per
	// Mailbox.
	DeadLetterReason string
}

// ReceiveResult is what Driver.Receive took.
type ReceiveResult struct {
	Rows []ReceivedRow
	// DeadLettered counts the messages moved to the DLQ instead.
	DeadLettered int
	// NextVisible is, when Rows is empty, the earliest visibility deadline
	// after the receive, on the caller's clock; zero when no message is
	// hidden (or when Rows is not empty).
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
	// or no longer in flight).
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

// SweepArgs are Driver.Sweep's arguments.
type SweepArgs struct {
	Now              time.Time
	AuditRetention   time.Duration
	ArchiveRetention time.Duration
	WorkerRetention  time.Duration
}
