package sqlmailbox

import "errors"

var (
	// ErrSchemaTooNew means the database holds a schema newer than this
	// version of sqlmailbox knows: a newer sqsloop migrated it. Open fails
	// with it rather than use, or downgrade, tables it does not understand;
	// upgrade the program instead.
	ErrSchemaTooNew = errors.New("sqlmailbox: database schema is newer than this sqlmailbox")

	// ErrQueueInUse means a queue cannot be deleted because another queue's
	// redrive policy names it as its dead-letter queue: delete that queue
	// first.
	ErrQueueInUse = errors.New("sqlmailbox: queue is another queue's dead-letter queue")

	// ErrNotADatabase means the file or server Open was given is not a
	// database sqlmailbox can use (a file that is not SQLite, a DSN that
	// does not parse); the wrapping error says which and why.
	ErrNotADatabase = errors.New("sqlmailbox: not a usable database")
)
