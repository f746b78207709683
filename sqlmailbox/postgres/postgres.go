package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// PollInterval is how often a long poll looks at the database when nothing
// woke it: 2 s, a safety net under LISTEN/NOTIFY (notifications sent while
// the listening connection was down are lost), unless
// sqlmailbox.Config.PollInterval says otherwise.
const PollInterval = 2 * time.Second

// Options configures Open.
type Options struct {
	// Config tunes the Store (retention, archive, worker registry, polls).
	sqlmailbox.Config

	// MaxConns bounds the connection pool, 1–10,000; 0 means pgxpool's
	// default (the larger of 4 and the number of CPUs), or pool_max_conns
	// in the DSN. A long poll holds no connection while it waits; the
	// listener holds one more, outside the pool.
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

// Open connects to the PostgreSQL database dsn names (a URL,
// "postgres://user:password@host:5432/db?sslmode=disable", or key=value
// pairs; libpq's environment variables fill what it leaves out), creates or
// migrates sqlmailbox's schema in it, and returns the Store. Any number of
// processes on any number of machines may share it: receives take messages
// with FOR UPDATE SKIP LOCKED, so two never hold one message, and a message
// sent or nacked anywhere wakes every waiting long poll (LISTEN/NOTIFY).
// Leases follow the server's clock.
//
// Errors, at Open rather than at the first call: Options.Validate's
// (wrapping sqsloop.ErrInvalidArgument); sqlmailbox.ErrNotADatabase for a
// DSN that does not parse; sqlmailbox.ErrSchemaTooNew for a database a
// newer sqsloop migrated; sqsloop.ErrAccessDenied for a login the server
// refuses (SQLSTATE 28P01, 28000) or a privilege the role lacks (42501),
// at Open or at any later call, wrapping the server's *pgconn.PgError; or
// the server's (unreachable). Once open, a server that goes away makes
// calls fail with transient errors, and the pool reconnects when it is
// back.
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
	d := &driver{pool: pool, connCfg: cfg.ConnConfig, where: fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)}
	return sqlmailbox.Open(ctx, d, opts.Config)
}

// driver is the PostgreSQL sqlmailbox.Driver, on a pgx pool.
type driver struct {
	pool    *pgxpool.Pool
	connCfg *pgx.ConnConfig // for the listener's own connection
	where   string          // host:port/database, for errors
}

func (d *driver) Dialect() string             { return "postgres" }
func (d *driver) PollInterval() time.Duration { return PollInterval }

func (d *driver) Close() error {
	d.pool.Close()
	return nil
}

// classify maps the server's errors to sqlmailbox's: a foreign key that
// names a deleted queue is sqsloop.ErrQueueNotFound; a missing privilege
// (insufficient_privilege, 42501) or a refused login (invalid_password,
// 28P01; invalid_authorization_specification, 28000: an unknown role, a
// pg_hba.conf rule) is sqsloop.ErrAccessDenied, which retrying does not
// mend; every error says where.
func (d *driver) classify(err error) error {
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

// tx runs f in a transaction.
func (d *driver) tx(ctx context.Context, f func(pgx.Tx) error) error {
	return d.classify(pgx.BeginFunc(ctx, d.pool, f))
}

// Migrate creates or upgrades the schema in one transaction holding the
// advisory lock, so that processes starting together migrate once.
func (d *driver) Migrate(ctx context.Context) error {
	return d.tx(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{qLock, qSchemaTable} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		var v int
		if err := tx.QueryRow(ctx, qSchemaVersion).Scan(&v); err != nil {
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("schema version %d, this sqlmailbox knows up to %d: %w (upgrade sqsloop)",
				v, len(migrations), sqlmailbox.ErrSchemaTooNew)
		}
		if v == len(migrations) {
			return nil
		}
		for _, m := range migrations[v:] {
			if _, err := tx.Exec(ctx, m); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, qSetVersion, len(migrations))
		return err
	})
}

// Listen listens on the channel every Send and nack notifies, on a
// connection of its own, and wakes the queue each notification names.
func (d *driver) Listen(ctx context.Context, ready func(), wake func(queueID int64)) error {
	conn, err := pgx.ConnectConfig(ctx, d.connCfg)
	if err != nil {
		return d.classify(err)
	}
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
		if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
			wake(id)
		}
	}
}

var _ sqlmailbox.Notifier = (*driver)(nil)
