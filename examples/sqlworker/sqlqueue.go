package main

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/jobstate/pgstate"
	_ "github.com/sqsloop/sqsloop/jobstate/sqlitestate" // jobstate.Open("sqlite:…")
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	_ "github.com/sqsloop/sqsloop/sqlmailbox/sqlite" // sqlmailbox.Open("sqlite:…")
)

// openSQL opens the job's queue in a database (-mailbox, a URL
// sqlmailbox.Open opens): the queue "jobs" and its dead-letter queue
// "jobs-dlq", created on first use, in a SQLite file ("sqlite:jobs.db") or
// a PostgreSQL database (a postgres:// or postgresql:// URL). The jobs
// outlive the process: a run that was interrupted leaves the rest waiting,
// and the next run finishes them instead of enqueueing anew.
func openSQL(ctx context.Context, spec string) (*worker.Queue, error) {
	if err := migrate(ctx, spec); err != nil {
		return nil, err
	}
	st, err := sqlmailbox.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	mb, err := st.CreateQueue(ctx, worker.Spec(worker.QueueName))
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return worker.NewQueue(ctx, mb, "", true, func() { st.Close() })
}

// migrate brings a PostgreSQL database's schemas (the queue's and the job
// state's) up to date: the demo migrates as it starts, with its own role;
// a service migrates in a step of its own (a deploy's migration job,
// `sqsloop migrate`), and its workers' role needs no more than SELECT,
// INSERT, UPDATE and DELETE. A SQLite file gets its schemas as it is
// opened.
func migrate(ctx context.Context, spec string) error {
	if !strings.HasPrefix(spec, "postgres://") && !strings.HasPrefix(spec, "postgresql://") {
		return nil
	}
	pool, err := pgxpool.New(ctx, spec)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	_, err = pgstate.Migrate(ctx, pool)
	return err
}

// database names the database of a -mailbox spec for the user: the SQLite
// spec itself, or "PostgreSQL" (a URL may hold a password).
func database(spec string) string {
	if strings.HasPrefix(spec, "postgres") {
		return "PostgreSQL"
	}
	return spec
}
