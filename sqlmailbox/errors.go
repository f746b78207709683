package sqlmailbox

import "errors"

var (
	// ErrSchemaOutdated means the database has no sqlmailbox schema, or an
	// older one than this version of sqlmailbox needs: opening a Store
	// fails with it, and changes nothing. Migrating is a step of its own,
	// with a role allowed to change the schema: the Migrate function of
	// sqlmailbox/sqlite or sqlmailbox/postgres (SQLite's Open also creates
	// the schema of a file that has none).
	ErrSchemaOutdated = errors.New("sqlmailbox: database schema is missing or older than this sqlmailbox")

	// ErrSchemaTooNew means the database holds a schema newer than this
	// version of sqlmailbox knows: a newer sqsloop migrated it. Opening a
	// Store and migrating fail with it rather than use, or downgrade,
	// tables they do not understand; upgrade the program instead.
	ErrSchemaTooNew = errors.New("sqlmailbox: database schema is newer than this sqlmailbox")

	// ErrQueueInUse means a queue cannot be deleted because another queue's
	// redrive policy names it as its dead-letter queue: delete that queue
	// first.
	ErrQueueInUse = errors.New("sqlmailbox: queue is another queue's dead-letter queue")

	// ErrNotADatabase means the file or server given is not a database
	// sqlmailbox can use (a file that is not SQLite, a DSN that does not
	// parse); the wrapping error says which and why.
	ErrNotADatabase = errors.New("sqlmailbox: not a usable database")
)
