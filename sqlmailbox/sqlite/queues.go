package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

func (d *sqliteDriver) CreateQueue(ctx context.Context, q driver.QueueRecord) (driver.QueueRecord, error) {
	var got driver.QueueRecord
	err := d.tx(ctx, func(tx *sql.Tx) error {
		sp := q.Spec
		var dlq any
		if q.DeadLetterQueueID != 0 {
			dlq = q.DeadLetterQueueID
		}
		if _, err := tx.ExecContext(ctx, qInsertQueue, sp.Name, sp.FIFO, sp.ContentBasedDeduplication,
			seconds(sp.VisibilityTimeout), seconds(sp.Delay), seconds(sp.RetentionPeriod), sp.MaxMessageSize,
			sp.MaxReceiveCount, dlq, q.Key, micros(time.Now()), sp.Priority); err != nil {
			return err
		}
		var err error
		got, err = loadQueue(ctx, tx, sp.Name)
		return err
	})
	return got, err
}

func (d *sqliteDriver) LoadQueue(ctx context.Context, name string) (driver.QueueRecord, error) {
	var got driver.QueueRecord
	err := d.read(ctx, func(tx *sql.Tx) error {
		var err error
		got, err = loadQueue(ctx, tx, name)
		return err
	})
	return got, err
}

func loadQueue(ctx context.Context, tx *sql.Tx, name string) (driver.QueueRecord, error) {
	var q driver.QueueRecord
	var vis, delay, retention, created int64
	sp := &q.Spec
	err := tx.QueryRowContext(ctx, qLoadQueue, name).Scan(&q.ID, &sp.Name, &sp.FIFO, &sp.ContentBasedDeduplication,
		&vis, &delay, &retention, &sp.MaxMessageSize, &sp.MaxReceiveCount, &q.DeadLetterQueueID, &q.DeadLetterQueue,
		&q.Key, &created, &sp.Priority)
	if errors.Is(err, sql.ErrNoRows) {
		return q, fmt.Errorf("queue %q: %w", name, sqsloop.ErrQueueNotFound)
	}
	sp.VisibilityTimeout = time.Duration(vis) * time.Second
	sp.Delay = time.Duration(delay) * time.Second
	sp.RetentionPeriod = time.Duration(retention) * time.Second
	q.CreatedAt = fromMicros(created)
	return q, err
}

func (d *sqliteDriver) DeleteQueue(ctx context.Context, name string) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		var inUse bool
		if err := tx.QueryRowContext(ctx, qQueueIsDLQ, name).Scan(&inUse); err != nil {
			return err
		}
		if inUse {
			return fmt.Errorf("queue %q: %w", name, sqlmailbox.ErrQueueInUse)
		}
		res, err := tx.ExecContext(ctx, qDeleteQueue, name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, fmt.Errorf("queue %q: %w", name, sqsloop.ErrQueueNotFound))
		}
		return nil
	})
}

func (d *sqliteDriver) PurgeQueue(ctx context.Context, name string) (int, error) {
	var n int64
	err := d.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, qQueueID, name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("queue %q: %w", name, sqsloop.ErrQueueNotFound)
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, qPurgeQueue, id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

func (d *sqliteDriver) Exists(ctx context.Context, q *driver.QueueRecord) (bool, error) {
	var ok bool
	err := d.read(ctx, func(tx *sql.Tx) error { return tx.QueryRowContext(ctx, qExists, q.ID).Scan(&ok) })
	return ok, err
}

func (d *sqliteDriver) Counts(ctx context.Context, q *driver.QueueRecord, now time.Time) (driver.Counts, error) {
	var c driver.Counts
	var exists bool
	if err := d.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, qCounts, q.ID, micros(now)).Scan(&exists, &c.Visible, &c.InFlight, &c.Delayed)
	}); err != nil {
		return c, err
	}
	if !exists {
		return c, fmt.Errorf("queue %q: %w", q.Spec.Name, sqsloop.ErrQueueNotFound)
	}
	return c, nil
}
