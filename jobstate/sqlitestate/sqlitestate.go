// Package sqlitestate is a jobstate.Store in a SQLite database file, for
// checkpoints and idempotency keys (packages checkpoint and idempotency):
// the file of a sqlmailbox/sqlite Store (its own tables beside the
// mailbox's, with a schema version of their own) or any other, for
// consumers of SQS queues on one machine. Several processes may open one
// file at once: SQLite's file lock serializes their writes, and a claim
// is one statement under it. It is the only jobstate package that imports
// modernc.org/sqlite.
//
// It is also a jobstate.RateLimiter: a take or a pause is one statement
// (an upsert of the key's row in sqsloop_ratelimit).
//
// Cost: every Store method is one statement in one transaction (a refused
// Claim, and a Delete by an owner that finds another's record, read once
// more). Writes are made with synchronous=NORMAL (in WAL mode): they wait
// for no fsync, so that a handler saving a checkpoint at every step does
// not hold SQLite's one write lock for an fsync each time, which the
// mailbox's lease extensions in the same file wait behind. A record
// written survives the process being killed at any moment; an operating
// system crash or a power loss may undo the last moments' records: a
// checkpoint is then read a few steps back, and a completed key may run
// again (never a message lost: the mailbox keeps its own setting).
package sqlitestate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/internal/sqlstate"
)

// Errors of a schema, the same values as jobstate/pgstate's.
var (
	// ErrSchemaOutdated is not returned by Open (it creates the tables);
	// it is here for errors.Is against pgstate's.
	ErrSchemaOutdated = sqlstate.ErrSchemaOutdated
	// ErrSchemaTooNew: a newer sqsloop migrated the file's jobstate
	// tables (Open, Migrate).
	ErrSchemaTooNew = sqlstate.ErrSchemaTooNew
)

// DefaultBusyTimeout is how long a call waits for another process's lock
// on the file before it fails: 10 s, as sqlmailbox/sqlite's.
const DefaultBusyTimeout = 10 * time.Second

// Store is a jobstate.Store in one SQLite file. Safe for concurrent use;
// Close it when done.
type Store struct {
	sqlstate.Store
	db   *sql.DB
	path string
}

var _ jobstate.Store = (*Store)(nil)

// Open opens the SQLite database file at path (created if missing; its
// directory must exist) in WAL mode, and creates the jobstate tables
// (schema version 2) if the file lacks them, or adds version 2's rate
// limit table to a file of version 1, in one immediate transaction: two
// processes opening a new file at once create them once. It never alters
// a sqlmailbox table.
//
// Errors: an error wrapping sqsloop.ErrInvalidArgument for a path that is
// empty or holds '?'; ErrSchemaTooNew for a file a newer sqsloop
// migrated; ctx's; or SQLite's (a directory that does not exist, a file
// that is not a database).
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlitestate: Open: path %q: want a file path without '?': %w", path, sqsloop.ErrInvalidArgument)
	}
	dsn := fmt.Sprintf("%s?_busy_timeout=%d&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate", path, DefaultBusyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitestate: %s: %w", path, err)
	}
	// One connection: this process's calls queue in Go; only other
	// processes' wait on the file's lock.
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	s := &Store{db: db, path: path}
	s.Store = sqlstate.Store{D: &sqliteDriver{db: db, path: path, q: sqlstate.NewStatements(func(n int) string { return fmt.Sprint("?", n) }, "max")}}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the file. Calls after Close fail.
func (s *Store) Close() error { return s.db.Close() }

// DefaultSweepLimit is Sweep's batch when limit is 0: 1,000 rows.
const DefaultSweepLimit = sqlstate.DefaultSweepLimit

// Sweep deletes up to limit (0: DefaultSweepLimit) records that have
// expired, and as many rate limit keys whose turn has passed (as good as
// absent), and returns how many rows it deleted. Expired records count as absent whether
// or not they are swept; sweeping keeps the file small. Call it now and
// then (every few minutes).
//
// Errors: an error wrapping sqsloop.ErrInvalidArgument for a negative
// limit; ctx's; the database's.
func (s *Store) Sweep(ctx context.Context, limit int) (int64, error) {
	return s.Store.Sweep(ctx, limit)
}

// migrate creates the tables in a file without them, or brings them up
// to SchemaVersion, in one immediate transaction, and refuses a newer
// schema.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestate: %s: %w", s.path, err)
	}
	defer func() { _ = tx.Rollback() }()
	var v int
	err = tx.QueryRowContext(ctx, "SELECT version FROM sqsloop_jobstate_schema").Scan(&v)
	switch {
	case err == nil && v > sqlstate.SchemaVersion:
		return fmt.Errorf("sqlitestate: %s: jobstate schema version %d, this sqsloop knows up to %d: %w", s.path, v, sqlstate.SchemaVersion, ErrSchemaTooNew)
	case err == nil && v == sqlstate.SchemaVersion:
		return nil
	case err != nil && !strings.Contains(err.Error(), "no such table"):
		return fmt.Errorf("sqlitestate: %s: %w", s.path, err)
	}
	for _, q := range migrations[v:] {
		for _, q := range q {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("sqlitestate: %s: migrating the jobstate tables to version %d: %w", s.path, sqlstate.SchemaVersion, err)
			}
		}
	}
	return errors.Join(tx.Commit())
}

// migrations are the steps from each version to the next: migrations[v]
// takes version v to v+1.
var migrations = [][]string{schema, schemaV2}

// schemaV2 adds the rate limits' keys: a key's theoretical arrival time
// (jobstate.Rate), and whether its last take was granted (a take's one
// statement reads it back).
var schemaV2 = []string{
	`CREATE TABLE sqsloop_ratelimit (
		rate_key     TEXT PRIMARY KEY,
		tat          INTEGER NOT NULL, -- Unix microseconds
		last_granted BOOLEAN NOT NULL
	) WITHOUT ROWID`,
	`CREATE INDEX sqsloop_ratelimit_tat ON sqsloop_ratelimit (tat)`,
	`UPDATE sqsloop_jobstate_schema SET version = 2`,
}

// schema is version 1 of the tables.
var schema = []string{
	`CREATE TABLE sqsloop_jobstate (
		job_key     TEXT PRIMARY KEY,
		state       TEXT NOT NULL,
		owner       TEXT NOT NULL,
		value       BLOB,
		lease_until INTEGER NOT NULL, -- Unix microseconds, 0: none
		expires_at  INTEGER NOT NULL  -- Unix microseconds, 0: never
	) WITHOUT ROWID`,
	`CREATE INDEX sqsloop_jobstate_expires ON sqsloop_jobstate (expires_at) WHERE expires_at <> 0`,
	`CREATE TABLE sqsloop_jobstate_schema (version INTEGER NOT NULL)`,
	`INSERT INTO sqsloop_jobstate_schema (version) VALUES (1)`,
}

// sqliteDriver runs the statements, each in its own (autocommit)
// transaction, which _txlock=immediate does not touch: a single statement
// holds the write lock for itself.
type sqliteDriver struct {
	db   *sql.DB
	path string
	q    sqlstate.Statements
}

func (d *sqliteDriver) fail(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlitestate: %s: %w", d.path, err)
}

func (d *sqliteDriver) Get(ctx context.Context, key string, now int64) (sqlstate.Row, bool, error) {
	r := sqlstate.Row{Key: key}
	err := d.db.QueryRowContext(ctx, d.q.Get, key, now).Scan(&r.State, &r.Owner, &r.Value, &r.LeaseUntil, &r.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return sqlstate.Row{}, false, nil
	}
	return r, err == nil, d.fail(err)
}

func (d *sqliteDriver) Upsert(ctx context.Context, r sqlstate.Row) error {
	_, err := d.db.ExecContext(ctx, d.q.Upsert, r.Key, r.State, r.Owner, r.Value, r.LeaseUntil, r.ExpiresAt)
	return d.fail(err)
}

func (d *sqliteDriver) Claim(ctx context.Context, r sqlstate.Row, now int64) (bool, error) {
	return d.affected(d.db.ExecContext(ctx, d.q.Claim, r.Key, r.State, r.Owner, r.Value, r.LeaseUntil, r.ExpiresAt, now))
}

func (d *sqliteDriver) Delete(ctx context.Context, key string) error {
	_, err := d.db.ExecContext(ctx, d.q.Delete, key)
	return d.fail(err)
}

func (d *sqliteDriver) DeleteOwned(ctx context.Context, key, owner string, now int64) (bool, error) {
	return d.affected(d.db.ExecContext(ctx, d.q.DeleteOwned, key, owner, now))
}

func (d *sqliteDriver) Sweep(ctx context.Context, now int64, limit int) (int64, error) {
	res, err := d.db.ExecContext(ctx, d.q.Sweep, now, limit)
	if err != nil {
		return 0, d.fail(err)
	}
	n, err := res.RowsAffected()
	return n, d.fail(err)
}

func (d *sqliteDriver) Take(ctx context.Context, key string, now, interval, tolerance, maxWait int64) (tat int64, granted bool, err error) {
	err = d.db.QueryRowContext(ctx, d.q.Take, key, now, interval, tolerance, maxWait).Scan(&tat, &granted)
	return tat, granted, d.fail(err)
}

func (d *sqliteDriver) Pause(ctx context.Context, key string, tat int64) error {
	_, err := d.db.ExecContext(ctx, d.q.Pause, key, tat)
	return d.fail(err)
}

func (d *sqliteDriver) SweepRates(ctx context.Context, now int64, limit int) (int64, error) {
	res, err := d.db.ExecContext(ctx, d.q.SweepRates, now, limit)
	if err != nil {
		return 0, d.fail(err)
	}
	n, err := res.RowsAffected()
	return n, d.fail(err)
}

func (d *sqliteDriver) affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, d.fail(err)
	}
	n, err := res.RowsAffected()
	return n > 0, d.fail(err)
}
