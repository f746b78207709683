package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// sqlQueue is the worker's queue in a database (-mailbox): the queue "jobs"
// and its dead-letter queue "jobs-dlq", created on first use, in a SQLite
// file ("sqlite:jobs.db") or a PostgreSQL database ("postgres://…"). The
// jobs outlive the process: a run that was interrupted leaves the rest
// waiting, and the next run finishes them instead of enqueueing anew.
type sqlQueue struct {
	st        *sqlmailbox.Store
	mb        *sqlmailbox.Mailbox
	dlq       sqsloop.Mailbox
	where     string
	waiting   int // messages in the queue when the run began
	dlqBefore int // messages in the dead-letter queue when the run began
}

// newSQLQueue opens the database spec names: "sqlite:PATH", or a
// postgres:// or postgresql:// URL.
func newSQLQueue(ctx context.Context, spec string) (*sqlQueue, error) {
	var st *sqlmailbox.Store
	var err error
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		st, err = sqlite.Open(ctx, strings.TrimPrefix(spec, "sqlite:"), sqlite.Options{})
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		st, err = postgres.Open(ctx, spec, postgres.Options{})
	default:
		return nil, fmt.Errorf("-mailbox %q: want sqlite:PATH or a postgres:// URL", spec)
	}
	if err != nil {
		return nil, err
	}
	q := &sqlQueue{st: st, where: spec}
	if strings.HasPrefix(spec, "postgres") {
		q.where = "PostgreSQL"
	}
	if q.mb, err = st.CreateQueue(ctx, sqsloop.QueueSpec{Name: queueName, VisibilityTimeout: lease, MaxReceiveCount: maxReceiveCount}); err != nil {
		st.Close()
		return nil, err
	}
	if q.dlq, err = q.mb.OpenDeadLetterQueue(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if q.waiting, err = q.backlog(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if q.dlqBefore, err = visible(ctx, q.dlq); err != nil {
		st.Close()
		return nil, err
	}
	return q, nil
}

func (q *sqlQueue) mailbox() sqsloop.Mailbox { return q.mb }
func (q *sqlQueue) exact() bool              { return true }
func (q *sqlQueue) close()                   { q.st.Close() }

func (q *sqlQueue) backlog(ctx context.Context) (int, error) {
	a, err := q.mb.QueueAttributes(ctx)
	return a.ApproximateMessages + a.ApproximateMessagesInFlight + a.ApproximateMessagesDelayed, err
}

func (q *sqlQueue) deadLettered(ctx context.Context) (int, error) {
	n, err := visible(ctx, q.dlq)
	return n - q.dlqBefore, err
}

// visible counts the messages of mb that wait to be received.
func visible(ctx context.Context, mb sqsloop.Mailbox) (int, error) {
	a, err := mb.(sqsloop.AttributesReader).QueueAttributes(ctx)
	return a.ApproximateMessages, err
}
