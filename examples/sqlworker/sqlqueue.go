package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/pgstate"
	"github.com/sqsloop/sqsloop/jobstate/sqlitestate"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// openSQL opens the job's queue in a database (-mailbox): the queue
// "jobs" and its dead-letter queue "jobs-dlq", created on first use, in a
// SQLite file ("sqlite:jobs.db") or a PostgreSQL database (a postgres:// or
// postgresql:// URL). The jobs outlive the process: a run that was
// interrupted leaves the rest waiting, and the next run finishes them
// instead of enqueueing anew.
func openSQL(ctx context.Context, spec string) (*worker.Queue, error) {
	var st *sqlmailbox.Store
	var err error
	closeDB := func() {}
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		st, err = sqlite.Open(ctx, strings.TrimPrefix(spec, "sqlite:"), sqlite.Options{})
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		st, closeDB, err = openPostgres(ctx, spec)
	default:
		return nil, fmt.Errorf("-mailbox %q: want sqlite:PATH or a postgres:// URL", spec)
	}
	if err != nil {
		return nil, err
	}
	mb, err := st.CreateQueue(ctx, worker.Spec(worker.QueueName))
	if err != nil {
		st.Close()
		closeDB()
		return nil, err
	}
	return worker.NewQueue(ctx, mb, "", true, func() { st.Close(); closeDB() })
}

// openPostgres migrates the database url names and opens a Store on it.
// The demo migrates as it starts, with its own role; a service migrates in
// a step of its own (a deploy's migration job), and its workers' role needs
// no more than SELECT, INSERT, UPDATE and DELETE.
func openPostgres(ctx context.Context, url string) (*sqlmailbox.Store, func(), error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, nil, err
	}
	st, err := postgres.New(ctx, pool, postgres.Options{})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return st, pool.Close, nil
}

// openState opens the jobs' checkpoints and idempotency records in the
// database of the -mailbox spec, in tables of their own beside the queue's
// (migrated as openPostgres migrates the queue's).
func openState(ctx context.Context, spec string) (jobstate.Store, func(), error) {
	if path, ok := strings.CutPrefix(spec, "sqlite:"); ok {
		s, err := sqlitestate.Open(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		return s, func() { _ = s.Close() }, nil
	}
	pool, err := pgxpool.New(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	if _, err := pgstate.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, nil, err
	}
	s, err := pgstate.New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return s, pool.Close, nil
}

// database names the database of a -mailbox spec for the user: the SQLite
// spec itself, or "PostgreSQL" (a URL may hold a password).
func database(spec string) string {
	if strings.HasPrefix(spec, "postgres") {
		return "PostgreSQL"
	}
	return spec
}
