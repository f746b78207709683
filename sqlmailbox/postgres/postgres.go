package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// DefaultPollInterval is how often a long poll looks at the database when
// nothing woke it, unless sqlmailbox.Config.PollInterval says otherwise:
// 2 s, a safety net under LISTEN/NOTIFY (notifications sent while the
// listening connection was down are lost).
const DefaultPollInterval = 2 * time.Second

// Options configures Open and New.
type Options struct {
	// Config tunes the Store (retention, archive, receiver registry,
	// polls).
	sqlmailbox.Config

	// MaxConns bounds the connection pool Open makes, 1–10,000; 0 means
	// pgxpool's default (the larger of 4 and the number of CPUs), or
	// pool_max_conns in the DSN. A long poll holds no connection while it
	// waits; the listener holds one more, taken out of the pool. New, given
	// a pool, refuses it: set the pool's own.
	MaxConns int32
}

// Validate returns every problem of o, joined, each naming its field and
// range and wrapping sqsloop.ErrInvalidArgument; nil for valid Options.
func (o Options) Validate() error {
	var errs []error
	if err := o.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.MaxConns < 0 || o.MaxConns > 10000 {
		errs = append(errs, fmt.Errorf("%w: postgres: Options.MaxConns: must be 0 (the default) or between 1 and 10000, got %d",
			sqsloop.ErrInvalidArgument, o.MaxConns))
	}
	return errors.Join(errs...)
}

// Open connects a pool to the PostgreSQL database dsn names (a URL,
// "postgres://user:password@host:5432/db?sslmode=disable", or key=value
// pairs; libpq's environment variables fill what it leaves out) and
// returns the Store on it, as New does; Store.Close closes the pool. To
// configure the pool (tracing, TLS, RDS IAM authentication in
// BeforeConnect, sizes), make it and call New.
//
// Errors, at Open rather than at the first call: Options.Validate's
// (wrapping sqsloop.ErrInvalidArgument); sqlmailbox.ErrNotADatabase for a
// DSN that does not parse; and New's.
func Open(ctx context.Context, dsn string, opts Options) (*sqlmailbox.Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w: the DSN does not parse: %w", sqlmailbox.ErrNotADatabase, err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return driver.Open[sqlmailbox.Config, *sqlmailbox.Store](ctx, newDriver(pool, true), opts.Config)
}

// New returns a Store on pool, a pgx pool the program made and configured
// (tracing, TLS, RDS IAM authentication in BeforeConnect, sizes): every
// call of the Store takes its connections from it, and the Store's
// listener (LISTEN, for the long polls' wake-ups) takes one out of it for
// good, so the pool's hooks apply to it too. The program keeps the pool:
// Store.Close stops using it and leaves it open. The pool's role needs
// SELECT, INSERT, UPDATE and DELETE on sqlmailbox's tables and USAGE on
// their sequences, nothing more: the schema must be migrated already
// (Migrate, run by a role that may change it).
//
// Any number of processes on any number of machines may share the
// database: receives take messages with FOR UPDATE SKIP LOCKED, so two
// never hold one message, no call deadlocks with another (see the package
// doc), and a message made receivable anywhere (sent,
// nacked, its FIFO group freed) wakes waiting long polls, as many as the
// messages need (LISTEN/NOTIFY, at most one NOTIFY per queue per 2 ms from
// each Store).
// Leases follow the server's clock.
//
// Errors, at New rather than at the first call: Options.Validate's, or
// one for a MaxConns set (wrapping sqsloop.ErrInvalidArgument);
// sqlmailbox.ErrSchemaOutdated for a database without sqlmailbox's schema
// or with an older one; sqlmailbox.ErrSchemaTooNew for one a newer sqsloop
// migrated; sqsloop.ErrAccessDenied for a login the server refuses
// (SQLSTATE 28P01, 28000) or a privilege the role lacks (42501), at New or
// at any later call, wrapping the server's *pgconn.PgError; or the
// server's (unreachable). Once open, a server that goes away makes calls
// fail with transient errors, and the pool reconnects when it is back.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*sqlmailbox.Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.MaxConns != 0 {
		return nil, fmt.Errorf("%w: postgres: Options.MaxConns: must be 0 with New, got %d: size the pool given (pgxpool.Config.MaxConns)",
			sqsloop.ErrInvalidArgument, opts.MaxConns)
	}
	return driver.Open[sqlmailbox.Config, *sqlmailbox.Store](ctx, newDriver(pool, false), opts.Config)
}

// Migrate brings sqlmailbox's schema in the database of pool up to the
// version this sqlmailbox needs (creating it in the role's current schema,
// normally public, when there is none), in one transaction holding an
// advisory lock, so that processes migrating at once migrate once; it
// returns the version as it was before. It is a step of its own, like any
// migration tool's, run by a role that may create and alter tables (on
// PostgreSQL 15 and later, a role other than the owner of public needs
// CREATE on it): New and Open only check the version.
//
// Errors: sqlmailbox.ErrSchemaTooNew for a database a newer sqsloop
// migrated (left as it is); sqsloop.ErrAccessDenied for a role that may
// not; ctx's error; or the server's.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (sqlmailbox.SchemaVersion, error) {
	d := newDriver(pool, false)
	defer d.Close()
	from, err := d.migrate(ctx, len(migrations))
	if err != nil {
		return sqlmailbox.SchemaVersion{}, fmt.Errorf("postgres: migrating: %w", err)
	}
	return sqlmailbox.SchemaVersion{Database: from, Latest: len(migrations)}, nil
}

// ReadSchemaVersion reports where sqlmailbox's schema in the database of
// pool stands, reading only. Errors: sqsloop.ErrAccessDenied, ctx's, or
// the server's.
func ReadSchemaVersion(ctx context.Context, pool *pgxpool.Pool) (sqlmailbox.SchemaVersion, error) {
	d := newDriver(pool, false)
	defer d.Close()
	have, want, err := d.SchemaVersion(ctx)
	if err != nil {
		return sqlmailbox.SchemaVersion{}, fmt.Errorf("postgres: %w", err)
	}
	return sqlmailbox.SchemaVersion{Database: have, Latest: want}, nil
}

// pgDriver is the PostgreSQL driver.Driver, on a pgx pool.
type pgDriver struct {
	pool    *pgxpool.Pool
	ownPool bool   // Open made it: Close closes it
	where   string // host:port/database, for errors
	notes   *notifier
	tag     string // this driver's, in the payloads of its NOTIFYs
}

func newDriver(pool *pgxpool.Pool, own bool) *pgDriver {
	cc := pool.Config().ConnConfig
	notify := func(ctx context.Context, payload string) error {
		_, err := pool.Exec(ctx, qNotify, payload)
		return err
	}
	tag := newTag()
	return &pgDriver{pool: pool, ownPool: own, where: fmt.Sprintf("%s:%d/%s", cc.Host, cc.Port, cc.Database),
		notes: newNotifier(notify, notifyWindow, tag), tag: tag}
}

func (d *pgDriver) Dialect() string                    { return "postgres" }
func (d *pgDriver) DefaultPollInterval() time.Duration { return DefaultPollInterval }

// Close sends the NOTIFYs the notifier holds, and closes the pool if Open
// made it.
func (d *pgDriver) Close() error {
	d.notes.close()
	if d.ownPool {
		d.pool.Close()
	}
	return nil
}

// classify maps the server's errors to sqlmailbox's: a foreign key that
// names a deleted queue is sqsloop.ErrQueueNotFound; a missing privilege
// (insufficient_privilege, 42501) or a refused login (invalid_password,
// 28P01; invalid_authorization_specification, 28000: an unknown role, a
// pg_hba.conf rule) is sqsloop.ErrAccessDenied, which retrying does not
// mend; every error says where.
func (d *pgDriver) classify(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23503": // foreign_key_violation
			return fmt.Errorf("%w (%v)", sqsloop.ErrQueueNotFound, err)
		case "42501", "28P01", "28000":
			return fmt.Errorf("%s: %w: %w", d.where, sqsloop.ErrAccessDenied, err)
		}
	}
	return fmt.Errorf("%s: %w", d.where, err)
}

// connAttempts is how many times a receive, an ack or a visibility change
// is sent when the server ended its session under it (see lostSession):
// again at once, on another connection of the pool, up to 3 times in all,
// as an SDK sends a request again over a new connection when the old one
// broke, so that a session the server terminated (pg_terminate_backend,
// an idle-session timeout, a pooler) costs the call a round trip, not
// the caller's back-off (a consumer's receive loops wait 100 ms to 1 s
// after a failed receive). Three: the pool may hand out another
// connection the same storm ended before it notices.
const connAttempts = 3

// lostSession reports whether err says the statement was not applied
// because the connection was lost: the server terminated the session
// (admin_shutdown, 57P01, pg_terminate_backend; a session it ends sends
// that and rolls back what was under way) or the connection failed before
// anything was sent (pgconn.SafeToRetry).
func lostSession(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P01"
	}
	return pgconn.SafeToRetry(err)
}

// again runs f, and again at once while it fails with a lost session, up
// to connAttempts times in all, unless ctx ended. Only for calls that may
// be repeated: one whose answer was lost after it committed (the session
// ended between the commit and the answer, a moment) is applied twice,
// which a receive (its messages stay hidden until their lease ends, as a
// receive whose answer is lost on SQS), an ack (a second finds the
// message gone: success on a standard queue, an expired handle on a FIFO
// queue) and a visibility change (set again, or an expired handle) bear.
func again(ctx context.Context, f func() error) error {
	for i := 1; ; i++ {
		err := f()
		if err == nil || i == connAttempts || ctx.Err() != nil || !lostSession(err) {
			return err
		}
	}
}

// tx runs f in a transaction.
func (d *pgDriver) tx(ctx context.Context, f func(pgx.Tx) error) error {
	return d.classify(pgx.BeginFunc(ctx, d.pool, f))
}

// SchemaVersion reads the version sqsloop_schema holds, 0 without the
// table: two reads, no lock, no privilege but SELECT on it.
func (d *pgDriver) SchemaVersion(ctx context.Context) (have, want int, err error) {
	var exists bool
	if err := d.pool.QueryRow(ctx, qHasSchema).Scan(&exists); err != nil || !exists {
		return 0, len(migrations), d.classify(err)
	}
	err = d.pool.QueryRow(ctx, qSchemaVersion).Scan(&have)
	return have, len(migrations), d.classify(err)
}

// migrate brings the schema up to version to (at most len(migrations)) in
// one transaction holding the advisory lock, and returns the version
// before.
func (d *pgDriver) migrate(ctx context.Context, to int) (from int, err error) {
	err = d.tx(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{qLock, qSchemaTable} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, qSchemaVersion).Scan(&from); err != nil {
			return err
		}
		if from > len(migrations) {
			return fmt.Errorf("schema version %d, this sqlmailbox knows up to %d: %w (upgrade sqsloop)",
				from, len(migrations), sqlmailbox.ErrSchemaTooNew)
		}
		if from >= to {
			return nil
		}
		for _, m := range migrations[from:to] {
			if _, err := tx.Exec(ctx, m); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, qSetVersion, to)
		return err
	})
	return from, err
}

// Listen listens on the channel every change that makes a message
// receivable notifies, on a connection taken out of the pool for good
// (acquired and hijacked: the pool's configuration and hooks made it), and
// wakes the queue each notification of another Store names, for as many
// messages as it says.
func (d *pgDriver) Listen(ctx context.Context, ready func(), wake func(queueID int64, n int)) error {
	pc, err := d.pool.Acquire(ctx)
	if err != nil {
		return d.classify(err)
	}
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, qListen); err != nil {
		return d.classify(err)
	}
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return d.classify(err)
		}
		if id, msgs, tag, ok := parsePayload(n.Payload); ok && tag != d.tag {
			wake(id, msgs)
		}
	}
}

var _ driver.Notifier = (*pgDriver)(nil)
