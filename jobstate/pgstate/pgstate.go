// Package pgstate is a jobstate.Store in a PostgreSQL database, for
// checkpoints and idempotency keys (packages checkpoint and idempotency)
// shared by a fleet: the database of a sqlmailbox/postgres Store (its own
// tables beside the mailbox's, with a schema version of their own) or any
// other, for consumers of SQS queues. A claim is one INSERT … ON CONFLICT
// DO UPDATE … WHERE statement: the row lock it takes makes two claims of
// one key from any processes decide one after the other. It is the only
// jobstate package that imports pgx.
//
// # Migrations
//
// As sqlmailbox/postgres's: New and Open only check the schema version,
// and refuse a database without the tables (ErrSchemaOutdated); Migrate,
// a step of its own run by a role that may create tables, creates them.
// The workers' role needs SELECT, INSERT, UPDATE and DELETE on
// sqsloop_jobstate and sqsloop_ratelimit.
//
// It is also a jobstate.RateLimiter: a take or a pause is one statement,
// one round trip (an upsert of the key's row in sqsloop_ratelimit, whose
// row lock orders the takes of one key from every process).
//
// Cost: every Store method is one statement, one round trip (a refused
// Claim, and a Delete by an owner that finds another's record, read once
// more).
package pgstate

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/internal/sqlstate"
)

// Errors of a schema, the same values as jobstate/sqlitestate's.
var (
	// ErrSchemaOutdated: the database has no jobstate tables, or older
	// ones (New, Open); run Migrate.
	ErrSchemaOutdated = sqlstate.ErrSchemaOutdated
	// ErrSchemaTooNew: a newer sqsloop migrated the database's jobstate
	// tables (New, Open, Migrate).
	ErrSchemaTooNew = sqlstate.ErrSchemaTooNew
)

// Store is a jobstate.Store in a PostgreSQL database. Safe for concurrent
// use.
type Store struct {
	sqlstate.Store
	pool    *pgxpool.Pool
	ownPool bool
}

var _ jobstate.Store = (*Store)(nil)

// New returns the Store on pool's database, whose jobstate tables Migrate
// made; Close does not close pool.
//
// Errors: ErrSchemaOutdated for a database without the tables (or with
// older ones); ErrSchemaTooNew; sqsloop.ErrAccessDenied for a refused
// login or a missing privilege; ctx's; the server's.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("pgstate: New: pool is nil: %w", sqsloop.ErrInvalidArgument)
	}
	d := &pgDriver{pool: pool, q: sqlstate.NewStatements(func(n int) string { return fmt.Sprint("$", n) }, "GREATEST")}
	var v int
	var exists bool
	if err := pool.QueryRow(ctx, qHasSchema).Scan(&exists); err != nil {
		return nil, d.fail(err)
	}
	if exists {
		if err := pool.QueryRow(ctx, qVersion).Scan(&v); err != nil {
			return nil, d.fail(err)
		}
	}
	switch {
	case v < sqlstate.SchemaVersion:
		return nil, fmt.Errorf("pgstate: jobstate schema version %d, want %d: %w", v, sqlstate.SchemaVersion, ErrSchemaOutdated)
	case v > sqlstate.SchemaVersion:
		return nil, fmt.Errorf("pgstate: jobstate schema version %d, this sqsloop knows up to %d: %w", v, sqlstate.SchemaVersion, ErrSchemaTooNew)
	}
	return &Store{Store: sqlstate.Store{D: d}, pool: pool}, nil
}

// Open connects a pool to the database dsn names (a URL or key=value
// pairs, as pgx reads them) and returns the Store on it, as New does;
// Close closes the pool.
//
// Errors: New's, and pgx's for a DSN it cannot parse (wrapping
// sqsloop.ErrInvalidArgument).
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstate: Open: the DSN: %w: %w", sqsloop.ErrInvalidArgument, err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstate: Open: %w", err)
	}
	s, err := New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// Close closes the pool if Open made it.
func (s *Store) Close() {
	if s.ownPool {
		s.pool.Close()
	}
}

// DefaultSweepLimit is Sweep's batch when limit is 0: 1,000 rows.
const DefaultSweepLimit = sqlstate.DefaultSweepLimit

// Sweep deletes up to limit (0: DefaultSweepLimit) records that have
// expired, and as many rate limit keys whose turn has passed (as good as
// absent), and returns how many rows it deleted. Expired records count as absent whether
// or not they are swept; sweeping keeps the table small. Call it now and
// then (every few minutes).
//
// Errors: an error wrapping sqsloop.ErrInvalidArgument for a negative
// limit; ctx's; the database's.
func (s *Store) Sweep(ctx context.Context, limit int) (int64, error) {
	return s.Store.Sweep(ctx, limit)
}

// Migrate creates the jobstate tables in pool's database (in the role's
// current schema) when it has none, or brings them up to this sqsloop's
// version (2 adds the rate limits' table), in one transaction holding an
// advisory lock, so that processes migrating at once migrate once; it
// returns the version as it was before (0: none). It never alters a
// sqlmailbox table.
//
// Errors: ErrSchemaTooNew; sqsloop.ErrAccessDenied for a role that may not
// create tables; ctx's; the server's.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (from int, err error) {
	d := &pgDriver{pool: pool}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qLock); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, qHasSchema).Scan(&exists); err != nil {
			return err
		}
		if exists {
			if err := tx.QueryRow(ctx, qVersion).Scan(&from); err != nil {
				return err
			}
		}
		switch {
		case from > sqlstate.SchemaVersion:
			return fmt.Errorf("jobstate schema version %d, this sqsloop knows up to %d: %w", from, sqlstate.SchemaVersion, ErrSchemaTooNew)
		case from == sqlstate.SchemaVersion:
			return nil
		}
		for _, step := range migrations[from:] {
			for _, q := range step {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return from, d.fail(err)
}

const (
	// qLock serializes migrations: an advisory lock of the transaction,
	// on a number of this package's own.
	qLock      = `SELECT pg_advisory_xact_lock(7306185923917142101)`
	qHasSchema = `SELECT to_regclass('sqsloop_jobstate_schema') IS NOT NULL`
	qVersion   = `SELECT version FROM sqsloop_jobstate_schema`
)

// migrations are the steps from each version to the next: migrations[v]
// takes version v to v+1.
var migrations = [][]string{schema, schemaV2}

// schemaV2 adds the rate limits' keys: a key's theoretical arrival time
// (jobstate.Rate), and whether its last take was granted (a take's one
// statement reads it back).
var schemaV2 = []string{
	`CREATE TABLE sqsloop_ratelimit (
		rate_key     text PRIMARY KEY,
		tat          bigint NOT NULL, -- Unix microseconds
		last_granted boolean NOT NULL
	)`,
	`CREATE INDEX sqsloop_ratelimit_tat ON sqsloop_ratelimit (tat)`,
	`UPDATE sqsloop_jobstate_schema SET version = 2`,
}

// schema is version 1 of the tables.
var schema = []string{
	`CREATE TABLE sqsloop_jobstate (
		job_key     text PRIMARY KEY,
		state       text NOT NULL,
		owner       text NOT NULL,
		value       bytea,
		lease_until bigint NOT NULL, -- Unix microseconds, 0: none
		expires_at  bigint NOT NULL  -- Unix microseconds, 0: never
	)`,
	`CREATE INDEX sqsloop_jobstate_expires ON sqsloop_jobstate (expires_at) WHERE expires_at <> 0`,
	`CREATE TABLE sqsloop_jobstate_schema (version integer NOT NULL)`,
	`INSERT INTO sqsloop_jobstate_schema (version) VALUES (1)`,
}

// pgDriver runs the statements on the pool, one round trip each.
type pgDriver struct {
	pool *pgxpool.Pool
	q    sqlstate.Statements
}

// fail says where an error comes from, and makes a refused login or a
// missing privilege sqsloop.ErrAccessDenied, which retrying does not mend.
func (d *pgDriver) fail(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42501" || pe.Code == "28P01" || pe.Code == "28000") {
		return fmt.Errorf("pgstate: %w: %w", sqsloop.ErrAccessDenied, err)
	}
	return fmt.Errorf("pgstate: %w", err)
}

func (d *pgDriver) Get(ctx context.Context, key string, now int64) (sqlstate.Row, bool, error) {
	r := sqlstate.Row{Key: key}
	err := d.pool.QueryRow(ctx, d.q.Get, key, now).Scan(&r.State, &r.Owner, &r.Value, &r.LeaseUntil, &r.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstate.Row{}, false, nil
	}
	return r, err == nil, d.fail(err)
}

func (d *pgDriver) Upsert(ctx context.Context, r sqlstate.Row) error {
	_, err := d.pool.Exec(ctx, d.q.Upsert, r.Key, r.State, r.Owner, r.Value, r.LeaseUntil, r.ExpiresAt)
	return d.fail(err)
}

func (d *pgDriver) Claim(ctx context.Context, r sqlstate.Row, now int64) (bool, error) {
	tag, err := d.pool.Exec(ctx, d.q.Claim, r.Key, r.State, r.Owner, r.Value, r.LeaseUntil, r.ExpiresAt, now)
	return tag.RowsAffected() > 0, d.fail(err)
}

func (d *pgDriver) Delete(ctx context.Context, key string) error {
	_, err := d.pool.Exec(ctx, d.q.Delete, key)
	return d.fail(err)
}

func (d *pgDriver) DeleteOwned(ctx context.Context, key, owner string, now int64) (bool, error) {
	tag, err := d.pool.Exec(ctx, d.q.DeleteOwned, key, owner, now)
	return tag.RowsAffected() > 0, d.fail(err)
}

func (d *pgDriver) Take(ctx context.Context, key string, now, interval, tolerance, maxWait int64) (tat int64, granted bool, err error) {
	err = d.pool.QueryRow(ctx, d.q.Take, key, now, interval, tolerance, maxWait).Scan(&tat, &granted)
	return tat, granted, d.fail(err)
}

func (d *pgDriver) Pause(ctx context.Context, key string, tat int64) error {
	_, err := d.pool.Exec(ctx, d.q.Pause, key, tat)
	return d.fail(err)
}

func (d *pgDriver) SweepRates(ctx context.Context, now int64, limit int) (int64, error) {
	tag, err := d.pool.Exec(ctx, d.q.SweepRates, now, limit)
	return tag.RowsAffected(), d.fail(err)
}

func (d *pgDriver) Sweep(ctx context.Context, now int64, limit int) (int64, error) {
	tag, err := d.pool.Exec(ctx, d.q.Sweep, now, limit)
	return tag.RowsAffected(), d.fail(err)
}
