package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Defaults of Options.
const (
	// DefaultBusyTimeout is how long a call waits for another process's
	// lock on the file before it fails (SQLite's busy timeout) when
	// Options.BusyTimeout is 0: 10 s.
	DefaultBusyTimeout = 10 * time.Second

	// DefaultPollInterval is how often a long poll looks at the file when
	// nothing this process did woke it, unless
	// sqlmailbox.Config.PollInterval says otherwise: 200 ms, the longest a
	// message sent by another process waits for a waiting receiver.
	DefaultPollInterval = 200 * time.Millisecond
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
// directory must exist), in WAL mode, and returns the Store. A file without
// a sqlmailbox schema (a new one) gets one; a file with an older schema is
// left alone and refused (migrate it first: Migrate), so that no process
// alters a schema others use without being asked. Several processes may
// open one file at once and share its queues correctly: SQLite's file locks
// serialize their writes (each call one short transaction), a call waits
// up to Options.BusyTimeout for another's lock, and a long poll sees other
// processes' messages within sqlmailbox.Config.PollInterval (200 ms).
// Opening a file with a current schema, and the Store's reads
// (QueueAttributes, Queue, Receivers, Audit, Archived), take no write
// lock: a dashboard in another process does not wait for the workers, nor
// they for it.
//
// Errors, at Open rather than at the first call: Options.Validate's
// (wrapping sqsloop.ErrInvalidArgument); sqlmailbox.ErrNotADatabase for a
// path with '?', a directory, or a file that is not SQLite;
// sqlmailbox.ErrSchemaOutdated for a file with an older schema;
// sqlmailbox.ErrSchemaTooNew for a file a newer sqsloop migrated; or
// SQLite's (a directory that does not exist, no permission).
func Open(ctx context.Context, path string, opts Options) (*sqlmailbox.Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	d, err := newDriver(path, opts)
	if err != nil {
		return nil, err
	}
	have, _, err := d.SchemaVersion(ctx)
	if err == nil && have == 0 {
		_, err = d.migrate(ctx, len(migrations))
	}
	if err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return driver.Open[sqlmailbox.Config, *sqlmailbox.Store](ctx, d, opts.Config)
}

// Migrate brings the sqlmailbox schema of the database file at path
// (created if missing) up to the version this sqlmailbox needs, in one
// immediate transaction, so that two processes migrating at once migrate
// once; it returns the version as it was before. A file already at the
// latest version is not written. It waits for other processes' locks up to
// DefaultBusyTimeout.
//
// Errors: sqlmailbox.ErrNotADatabase as Open's; sqlmailbox.ErrSchemaTooNew
// for a file a newer sqsloop migrated (left as it is); ctx's error; or
// SQLite's.
func Migrate(ctx context.Context, path string) (sqlmailbox.SchemaVersion, error) {
	d, err := newDriver(path, Options{})
	if err != nil {
		return sqlmailbox.SchemaVersion{}, err
	}
	defer d.Close()
	from, err := d.migrate(ctx, len(migrations))
	if err != nil {
		return sqlmailbox.SchemaVersion{}, fmt.Errorf("sqlite: %w", err)
	}
	return sqlmailbox.SchemaVersion{Database: from, Latest: len(migrations)}, nil
}

// ReadSchemaVersion reports where the sqlmailbox schema of the database
// file at path stands, reading only (a missing file has version 0 and is
// not created). Errors: as Migrate's, but for ErrSchemaTooNew, which it
// does not return: it reports the version.
func ReadSchemaVersion(ctx context.Context, path string) (sqlmailbox.SchemaVersion, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return sqlmailbox.SchemaVersion{Latest: len(migrations)}, nil
	}
	d, err := newDriver(path, Options{})
	if err != nil {
		return sqlmailbox.SchemaVersion{}, err
	}
	defer d.Close()
	have, want, err := d.SchemaVersion(ctx)
	if err != nil {
		return sqlmailbox.SchemaVersion{}, fmt.Errorf("sqlite: %w", err)
	}
	return sqlmailbox.SchemaVersion{Database: have, Latest: want}, nil
}

// newDriver opens the file at path with opts (valid), without touching its
// schema.
func newDriver(path string, opts Options) (*sqliteDriver, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite: path %q: %w: want a file path without '?'", path, sqlmailbox.ErrNotADatabase)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("sqlite: %s: %w: a directory", path, sqlmailbox.ErrNotADatabase)
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
	return &sqliteDriver{db: db, path: path}, nil
}

// sqliteDriver is the SQLite driver.Driver: one connection; every method
// that writes one immediate (write-locking) transaction, every method that
// only reads one deferred transaction, which takes no write lock.
type sqliteDriver struct {
	db   *sql.DB
	path string
}

func (d *sqliteDriver) Dialect() string                    { return "sqlite" }
func (d *sqliteDriver) DefaultPollInterval() time.Duration { return DefaultPollInterval }
func (d *sqliteDriver) Close() error                       { return d.db.Close() }
func micros(t time.Time) int64                             { return t.UnixMicro() }
func fromMicros(us int64) time.Time                        { return time.UnixMicro(us) }
func seconds(d time.Duration) int64                        { return int64(d / time.Second) }
func microsOf(d time.Duration) int64                       { return d.Microseconds() }

// tx runs f in an immediate transaction: it holds the file's write lock
// from its start, so that its reads and writes are one atomic step.
func (d *sqliteDriver) tx(ctx context.Context, f func(*sql.Tx) error) error {
	return d.run(ctx, nil, f)
}

// read runs f in a deferred, read-only transaction: one snapshot of the
// file, no write lock.
func (d *sqliteDriver) read(ctx context.Context, f func(*sql.Tx) error) error {
	return d.run(ctx, &sql.TxOptions{ReadOnly: true}, f)
}

func (d *sqliteDriver) run(ctx context.Context, opts *sql.TxOptions, f func(*sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, opts)
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
func (d *sqliteDriver) classify(err error) error {
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

// SchemaVersion reads the schema's version in a deferred transaction.
func (d *sqliteDriver) SchemaVersion(ctx context.Context) (have, want int, err error) {
	err = d.read(ctx, func(tx *sql.Tx) error {
		have, err = schemaVersion(ctx, tx)
		return err
	})
	return have, len(migrations), err
}

// schemaVersion returns the version sqsloop_schema holds, 0 without it.
func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	var tables, v int
	if err := tx.QueryRowContext(ctx, qHasSchema).Scan(&tables); err != nil || tables == 0 {
		return 0, err
	}
	err := tx.QueryRowContext(ctx, qSchemaVersion).Scan(&v)
	return v, err
}

// migrate brings the schema up to version to (at most len(migrations)) in
// one immediate transaction, so that two processes migrating a file at
// once migrate it once, and returns the version before.
func (d *sqliteDriver) migrate(ctx context.Context, to int) (from int, err error) {
	err = d.tx(ctx, func(tx *sql.Tx) error {
		if from, err = schemaVersion(ctx, tx); err != nil {
			return err
		}
		if from > len(migrations) {
			return fmt.Errorf("%s: schema version %d, this sqlmailbox knows up to %d: %w (upgrade sqsloop)",
				d.path, from, len(migrations), sqlmailbox.ErrSchemaTooNew)
		}
		if from >= to {
			return nil
		}
		if _, err := tx.ExecContext(ctx, qSchemaTable); err != nil {
			return err
		}
		for _, m := range migrations[from:to] {
			if _, err := tx.ExecContext(ctx, m); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, qClearVersion); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, qSetVersion, to)
		return err
	})
	return from, err
}
