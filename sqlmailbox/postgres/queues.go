package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

func (d *pgDriver) CreateQueue(ctx context.Context, q driver.QueueRecord) (driver.QueueRecord, error) {
	sp := q.Spec
	if _, err := d.pool.Exec(ctx, qInsertQueue, sp.Name, sp.FIFO, sp.ContentBasedDeduplication,
		seconds(sp.VisibilityTimeout), seconds(sp.Delay), seconds(sp.RetentionPeriod), sp.MaxMessageSize,
		sp.MaxReceiveCount, q.DeadLetterQueueID, q.Key, sp.Priority); err != nil {
		return q, d.classify(err)
	}
	return d.LoadQueue(ctx, sp.Name)
}

func (d *pgDriver) LoadQueue(ctx context.Context, name string) (driver.QueueRecord, error) {
	var q driver.QueueRecord
	var vis, delay, retention int32
	sp := &q.Spec
	err := d.pool.QueryRow(ctx, qLoadQueue, name).Scan(&q.ID, &sp.Name, &sp.FIFO, &sp.ContentBasedDeduplication,
		&vis, &delay, &retention, &sp.MaxMessageSize, &sp.MaxReceiveCount, &q.DeadLetterQueueID, &q.DeadLetterQueue,
		&q.Key, &q.CreatedAt, &sp.Priority)
	if errors.Is(err, pgx.ErrNoRows) {
		return q, fmt.Errorf("queue %q: %w", name, sqsloop.ErrQueueNotFound)
	}
	sp.VisibilityTimeout = time.Duration(vis) * time.Second
	sp.Delay = time.Duration(delay) * time.Second
	sp.RetentionPeriod = time.Duration(retention) * time.Second
	return q, d.classify(err)
}

func (d *pgDriver) DeleteQueue(ctx context.Context, name string) error {
	return d.tx(ctx, func(tx pgx.Tx) error {
		var inUse bool
		if err := tx.QueryRow(ctx, qQueueIsDLQ, name).Scan(&inUse); err != nil {
			return err
		}
		if inUse {
			return fmt.Errorf("queue %q: %w", name, sqlmailbox.ErrQueueInUse)
		}
		// The queue's row, then its messages in id order (see qWindow),
		// then the cascade, which finds them locked already.
		var id int64
		err := tx.QueryRow(ctx, qLockQueue, name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("queue %q: %w", name, sqsloop.ErrQueueNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, qLockMessages, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, qDeleteQueue, id)
		return err
	})
}

func (d *pgDriver) PurgeQueue(ctx context.Context, name string) (int, error) {
	var n int64
	err := d.tx(ctx, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, qQueueID, name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("queue %q: %w", name, sqsloop.ErrQueueNotFound)
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, qPurgeQueue, id)
		n = tag.RowsAffected()
		return err
	})
	return int(n), err
}

func (d *pgDriver) Exists(ctx context.Context, q *driver.QueueRecord) (bool, error) {
	var ok bool
	err := d.pool.QueryRow(ctx, qExists, q.ID).Scan(&ok)
	return ok, d.classify(err)
}

func (d *pgDriver) Counts(ctx context.Context, q *driver.QueueRecord, _ time.Time) (driver.Counts, error) {
	var c driver.Counts
	var exists bool
	var visible, inFlight, delayed int64
	if err := d.pool.QueryRow(ctx, qCounts, q.ID, levelsOf(q)).Scan(&exists, &visible, &inFlight, &delayed); err != nil {
		return c, d.classify(err)
	}
	if !exists {
		return c, fmt.Errorf("queue %q: %w", q.Spec.Name, sqsloop.ErrQueueNotFound)
	}
	return driver.Counts{Visible: int(visible), InFlight: int(inFlight), Delayed: int(delayed)}, nil
}

// seconds renders a whole-second duration as SQL's integer seconds.
func seconds(d time.Duration) int32 { return int32(d / time.Second) }
