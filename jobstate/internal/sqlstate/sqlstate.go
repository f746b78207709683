// Package sqlstate is the part of jobstate's SQL stores that no database
// dialect changes: the Store over a Driver (one statement per method), the
// mapping of a Record to its row, and the errors of a schema. Packages
// jobstate/sqlitestate and jobstate/pgstate are its Drivers; it imports no
// database driver. Not user API.
package sqlstate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
)

// Errors of a schema, exported again by each dialect's package.
var (
	// ErrSchemaOutdated: the database lacks the jobstate table, or has an
	// older version of it; run the dialect's Migrate.
	ErrSchemaOutdated = errors.New("jobstate: the database has no jobstate schema or an older one (run Migrate)")
	// ErrSchemaTooNew: a newer sqsloop migrated the database.
	ErrSchemaTooNew = errors.New("jobstate: the database's jobstate schema is newer than this sqsloop knows")
)

// SchemaVersion is the version of the jobstate tables this sqsloop writes:
// 2 (1: sqsloop_jobstate; 2 adds sqsloop_ratelimit, the rate limits'
// keys). Both dialects keep it in a table of their own
// (sqsloop_jobstate_schema), apart from sqlmailbox's.
const SchemaVersion = 2

// Row is a Record as its table keeps it: times in Unix microseconds, 0 for
// the zero time.
type Row struct {
	Key, State, Owner     string
	Value                 []byte
	LeaseUntil, ExpiresAt int64
}

// Driver runs one dialect's statements. now is the caller's clock in Unix
// microseconds; a row whose expires_at is not 0 and at or before now is
// expired. Every method is one statement.
type Driver interface {
	// Get returns the live row under key, and false when there is none.
	Get(ctx context.Context, key string, now int64) (Row, bool, error)
	// Upsert writes r, replacing the row under r.Key.
	Upsert(ctx context.Context, r Row) error
	// Claim writes r where no row stands under r.Key, or where the one
	// standing is expired, or is in progress with lease_until at or before
	// now or r.Owner as its owner; it reports whether it wrote.
	Claim(ctx context.Context, r Row, now int64) (bool, error)
	// Delete deletes the row under key.
	Delete(ctx context.Context, key string) error
	// DeleteOwned deletes the row under key if it is in progress held by
	// owner, or expired; it reports whether it deleted one.
	DeleteOwned(ctx context.Context, key, owner string, now int64) (bool, error)
	// Sweep deletes up to limit expired rows and returns how many.
	Sweep(ctx context.Context, now int64, limit int) (int64, error)

	// Take applies a take of a rate limit (Statements.Take) to key's row:
	// at now, with interval T, tolerance τ and maxWait, all in Unix
	// microseconds; it returns the row's TAT after it and whether it was
	// granted.
	Take(ctx context.Context, key string, now, interval, tolerance, maxWait int64) (tat int64, granted bool, err error)
	// Pause moves key's TAT to tat unless it is later already.
	Pause(ctx context.Context, key string, tat int64) error
	// SweepRates deletes up to limit rate keys whose TAT is at or before
	// now and returns how many.
	SweepRates(ctx context.Context, now int64, limit int) (int64, error)
}

// Store is a jobstate.Store on a Driver. Safe for concurrent use if the
// Driver is.
type Store struct{ D Driver }

var (
	_ jobstate.Store       = Store{}
	_ jobstate.RateLimiter = Store{}
)

// Get implements jobstate.Store.
func (s Store) Get(ctx context.Context, key string) (jobstate.Record, error) {
	r, ok, err := s.D.Get(ctx, key, micros(time.Now()))
	switch {
	case err != nil:
		return jobstate.Record{}, err
	case !ok:
		return jobstate.Record{}, fmt.Errorf("jobstate: %q: %w", key, jobstate.ErrNotFound)
	}
	return record(r), nil
}

// Put implements jobstate.Store.
func (s Store) Put(ctx context.Context, rec jobstate.Record) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	return s.D.Upsert(ctx, row(rec))
}

// claimTries bounds Claim's attempts: a refused claim reads the record
// that refused it, which may be gone by then (released, expired); the
// claim is then tried again.
const claimTries = 3

// Claim implements jobstate.Store: one conditional upsert; when it writes
// nothing, one read of the record standing.
func (s Store) Claim(ctx context.Context, rec jobstate.Record) (jobstate.Record, error) {
	if err := rec.ValidateClaim(); err != nil {
		return jobstate.Record{}, err
	}
	for range claimTries {
		now := micros(time.Now())
		ok, err := s.D.Claim(ctx, row(rec), now)
		if err != nil || ok {
			return jobstate.Record{}, err
		}
		standing, found, err := s.D.Get(ctx, rec.Key, now)
		if err != nil {
			return jobstate.Record{}, err
		}
		if found {
			r := record(standing)
			return r, fmt.Errorf("jobstate: %q is %s: %w", rec.Key, r.State, jobstate.ErrClaimed)
		}
	}
	return jobstate.Record{}, fmt.Errorf("jobstate: %q: %d claims refused by a record gone when read: %w", rec.Key, claimTries, jobstate.ErrClaimed)
}

// Delete implements jobstate.Store.
func (s Store) Delete(ctx context.Context, key, owner string) error {
	if owner == "" {
		return s.D.Delete(ctx, key)
	}
	now := micros(time.Now())
	deleted, err := s.D.DeleteOwned(ctx, key, owner, now)
	if err != nil || deleted {
		return err
	}
	r, found, err := s.D.Get(ctx, key, now)
	if err != nil || !found {
		return err
	}
	return fmt.Errorf("jobstate: %q is %s, not held by this owner: %w", key, r.State, jobstate.ErrClaimed)
}

// Take implements jobstate.RateLimiter: one statement.
func (s Store) Take(ctx context.Context, key string, r jobstate.Rate, maxWait time.Duration) (jobstate.Grant, error) {
	if err := jobstate.ValidateTake(key, r, maxWait); err != nil {
		return jobstate.Grant{}, err
	}
	now := micros(time.Now())
	tat, ok, err := s.D.Take(ctx, key, now, r.Interval.Microseconds(), r.Tolerance().Microseconds(), maxWait.Microseconds())
	if err != nil {
		return jobstate.Grant{}, err
	}
	if ok { // tat is from + T: the turn is from − τ
		tat -= r.Interval.Microseconds()
	}
	wait := time.Duration(tat-r.Tolerance().Microseconds()-now) * time.Microsecond
	if ok {
		wait = max(wait, 0)
	}
	return jobstate.Grant{OK: ok, Wait: wait}, nil
}

// Pause implements jobstate.RateLimiter: one statement.
func (s Store) Pause(ctx context.Context, key string, r jobstate.Rate, until time.Time) error {
	if err := jobstate.ValidatePause(key, r, until, time.Now()); err != nil {
		return err
	}
	return s.D.Pause(ctx, key, micros(r.PauseAt(time.Time{}, until)))
}

// DefaultSweepLimit is Sweep's batch when limit is 0: 1,000 rows.
const DefaultSweepLimit = 1000

// Sweep deletes up to limit (0: DefaultSweepLimit) expired records and as
// many rate keys whose TAT has passed, as the dialects' Store.Sweep
// documents, and returns how many rows it deleted; a negative limit is an
// error wrapping sqsloop.ErrInvalidArgument.
func (s Store) Sweep(ctx context.Context, limit int) (int64, error) {
	if limit < 0 {
		return 0, fmt.Errorf("jobstate: Sweep: limit %d, want 0 (default %d) or more: %w", limit, DefaultSweepLimit, sqsloop.ErrInvalidArgument)
	}
	if limit == 0 {
		limit = DefaultSweepLimit
	}
	now := micros(time.Now())
	n, err := s.D.Sweep(ctx, now, limit)
	if err != nil {
		return n, err
	}
	m, err := s.D.SweepRates(ctx, now, limit)
	return n + m, err
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

func row(r jobstate.Record) Row {
	return Row{Key: r.Key, State: string(r.State), Owner: r.Owner, Value: r.Value, LeaseUntil: micros(r.LeaseUntil), ExpiresAt: micros(r.ExpiresAt)}
}

func record(r Row) jobstate.Record {
	return jobstate.Record{Key: r.Key, State: jobstate.State(r.State), Owner: r.Owner, Value: r.Value,
		LeaseUntil: fromMicros(r.LeaseUntil), ExpiresAt: fromMicros(r.ExpiresAt)}
}
