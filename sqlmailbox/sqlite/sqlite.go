package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// Defaults of Options.
const (
	// DefaultBusyTimeout is how long a call waits for another process's
	// lock on the file before it fails (SQLite's busy timeout) when
	// Options.BusyTimeout is 0: 10 s.
	DefaultBusyTimeout = 10 * time.Second

	// PollInterval is how often a long poll looks at the file when no
	// message sent by this process woke it: 200 ms, the longest a message
	// sent by another process waits for a waiting receiver (unless
	// sqlmailbox.Config.PollInterval says otherwise).
	PollInterval = 200 * time.Millisecond
)

// Synchronous is SQLite's synchronous setting: when a commit waits for the
// disk.
type Synchronous string

const (
	// SyncFull (the default) syncs the write-ahead log at every commit: a
	// committed Send or Delete survives the process's death and a power
	// loss, provided the disk keeps what fsync reported written.
	SyncFull Synchronous = "FULL"
	// SyncNormal syncs only at checkpoints: a committed call survives the
	// process's death (SIGKILL), but a power loss or an operating system
	// crash may roll back the calls of the last moments: sends that
	// returned are lost, acks undone (those messages are delivered again).
	// Faster: a commit does not wait for the disk.
	SyncNormal Synchronous = "NORMAL"
)

// Options configures Open.
type Options struct {
	// Config tunes the Store (retention, archive, worker registry, polls).
	sqlmailbox.Config

	// BusyTimeout is how long a call waits for another process's lock on
	// the file before it fails, 1 ms–1 h; 0 means DefaultBusyTimeout (10 s).
	// Within it a locked file is waited for, never reported as SQLITE_BUSY.
	BusyTimeout time.Duration

	// Synchronous is SyncFull (the default, "") or SyncNormal.
	Synchronous Synchronous
}

// Validate returns every problem of o, joined, each naming its field and
// range and wrapping sqsloop.ErrInvalidArgument; nil for valid Options.
func (o Options) Validate() error {
	var errs []error
	if err := o.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.BusyTimeout != 0 && (o.BusyTimeout < time.Millisecond || o.BusyTimeout > time.Hour) {
		errs = append(errs, fmt.Errorf("%w: sqlite: Options.BusyTimeout: must be 0 (10s) or between 1ms and 1h, got %v",
			sqsloop.ErrInvalidArgument, o.BusyTimeout))
	}
	switch o.Synchronous {
	case "", SyncFull, SyncNormal:
	default:
		errs = append(errs, fmt.Errorf("%w: sqlite: Options.Synchronous: must be FULL or NORMAL, got %q",
			sqsloop.ErrInvalidArgument, o.Synchronous))
	}
	return errors.Join(errs...)
}

// Open opens the SQLite database file at path (created if missing; its
// directory must exist), in WAL mode, creates or migrates sqlmailbox's
// schema in it, and returns the Store. Several processes may open one file
// at once and share its queues correctly: SQLite's file locks serialize
// their writes (each call one short transaction), a call waits up to
// Options.BusyTimeout for another's lock, and a long poll sees other
// processes' messages within sqlmailbox.Config.PollInterval (200 ms).
//
// Errors, at Open rather than at the first call: Options.Validate's
// (wrapping sqsloop.ErrInvalidArgument); sqlmailbox.ErrNotADatabase for a
// path with '?' or a file that is not SQLite; sqlmailbox.ErrSchemaTooNew
// for a database a newer sqsloop migrated; or SQLite's (a directory that
// does not exist, no permission).
func Open(ctx context.Context, path string, opts Options) (*sqlmailbox.Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite: path %q: %w: want a file path without '?'", path, sqlmailbox.ErrNotADatabase)
	}
	busy := opts.BusyTimeout
	if busy == 0 {
		busy = DefaultBusyTimeout
	}
	sync := opts.Synchronous
	if sync == "" {
		sync = SyncFull
	}
	dsn := fmt.Sprintf("%s?_busy_timeout=%d&_journal_mode=WAL&_synchronous=%s&_foreign_keys=1&_txlock=immediate",
		path, busy.Milliseconds(), sync)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	// One connection: this process's calls queue in Go, and only other
	// processes' ever wait on SQLite's lock (busy timeout).
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	d := &driver{db: db, path: path}
	return sqlmailbox.Open(ctx, d, opts.Config)
}

// driver is the SQLite sqlmailbox.Driver: one connection, every method one
// immediate (write-locking) transaction.
type driver struct {
	db   *sql.DB
	path string
}

func (d *driver) Dialect() string             { return "sqlite" }
func (d *driver) PollInterval() time.Duration { return PollInterval }
func (d *driver) Close() error                { return d.db.Close() }
func micros(t time.Time) int64                { return t.UnixMicro() }
func fromMicros(us int64) time.Time           { return time.UnixMicro(us) }
func seconds(d time.Duration) int64           { return int64(d / time.Second) }
func microsOf(d time.Duration) int64          { return d.Microseconds() }
func (d *driver) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return d.classify(err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return d.classify(err)
	}
	return d.classify(tx.Commit())
}

// classify maps SQLite's errors to sqlmailbox's: a file that is not a
// database, a foreign key that names a deleted queue; a lock held past the
// busy timeout says so; every other SQLite error names the file.
func (d *driver) classify(err error) error {
	var se *msqlite.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%s: %w: %w", d.path, sqlmailbox.ErrNotADatabase, err)
	case sqlite3.SQLITE_BUSY:
		return fmt.Errorf("%s: locked by another connection for longer than the busy timeout: %w", d.path, err)
	}
	if se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY {
		return fmt.Errorf("%w (%v)", sqsloop.ErrQueueNotFound, err)
	}
	return fmt.Errorf("%s: %w", d.path, err)
}

// Migrate creates or upgrades the schema in one immediate transaction, so
// two processes opening a new file at once migrate it once.
func (d *driver) Migrate(ctx context.Context) error {
	if fi, err := os.Stat(d.path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: %w: a directory", d.path, sqlmailbox.ErrNotADatabase)
	}
	return d.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, qSchemaTable); err != nil {
			return err
		}
		var v int
		if err := tx.QueryRowContext(ctx, qSchemaVersion).Scan(&v); err != nil {
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("%s: schema version %d, this sqlmailbox knows up to %d: %w (upgrade sqsloop)",
				d.path, v, len(migrations), sqlmailbox.ErrSchemaTooNew)
		}
		if v == len(migrations) {
			return nil
		}
		for _, m := range migrations[v:] {
			if _, err := tx.ExecContext(ctx, m); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, qClearVersion); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, qSetVersion, len(migrations))
		return err
	})
}
