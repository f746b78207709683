package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Sweep sweeps each queue in statements of its own (lapsed leases, then
// retention in chunks of 1,000), so no lock is held for long, then trims
// the other tables.
func (d *pgDriver) Sweep(ctx context.Context, a driver.SweepArgs) (driver.SweepCounts, error) {
	var st driver.SweepCounts
	type queue struct {
		id, dlq         int64
		name            string
		maxReceives     int
		retention       int32
		sweptAt, now    time.Time
		deadLetterQueue string
	}
	rows, err := d.pool.Query(ctx, qSweepQueues)
	if err != nil {
		return st, d.classify(err)
	}
	var qs []queue
	var q queue
	if _, err := pgx.ForEachRow(rows, []any{&q.id, &q.name, &q.dlq, &q.deadLetterQueue, &q.maxReceives, &q.retention, &q.sweptAt, &q.now}, func() error {
		qs = append(qs, q)
		return nil
	}); err != nil {
		return st, d.classify(err)
	}
	for _, q := range qs {
		var recovered, failed int64
		if err := d.pool.QueryRow(ctx, qSweepLapsed, q.id, q.sweptAt, q.now, q.maxReceives, q.dlq, q.name,
			driver.DeadLetterReason(q.maxReceives, q.deadLetterQueue), string(sqlmailbox.AuditDeadLettered),
			string(sqlmailbox.AuditLeaseExpired), driver.ReasonLeaseExpired).Scan(&recovered, &failed); err != nil {
			return st, d.classify(err)
		}
		st.ExpiredFound += int(recovered + failed)
		st.Recovered += int(recovered)
		st.Failed += int(failed)
		if failed > 0 {
			if err := d.notes.notify(ctx, q.dlq); err != nil {
				return st, d.classify(err)
			}
		}
		retention := time.Duration(q.retention) * time.Second
		why := driver.RetentionReason(retention)
		for {
			var n int64
			if err := d.pool.QueryRow(ctx, qSweepRetention, q.id, q.now.Add(-retention), q.name, why, string(sqlmailbox.AuditRetention)).Scan(&n); err != nil {
				return st, d.classify(err)
			}
			st.RetentionDeleted += int(n)
			if n < 1000 {
				break
			}
		}
		st.Queues++
	}
	for _, t := range []struct {
		q   string
		age time.Duration
		n   *int
	}{
		{qTrimDedup, 0, &st.DeduplicationIDsPruned},
		{qTrimAudit, a.AuditRetention, &st.AuditTrimmed},
		{qTrimArchive, a.ArchiveRetention, &st.ArchiveTrimmed},
		{qTrimReceivers, a.ReceiverRetention, &st.ReceiversRemoved},
	} {
		args := []any{t.age.Microseconds()}
		if t.q == qTrimDedup {
			args = nil
		}
		tag, err := d.pool.Exec(ctx, t.q, args...)
		if err != nil {
			return st, d.classify(err)
		}
		*t.n = int(tag.RowsAffected())
	}
	return st, nil
}

func (d *pgDriver) Audit(ctx context.Context, queue string, limit int) ([]driver.AuditRow, error) {
	rows, err := d.pool.Query(ctx, qAuditList, queue, limit)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []driver.AuditRow
	var r driver.AuditRow
	_, err = pgx.ForEachRow(rows, []any{&r.Queue, &r.MessageID, &r.ReceiveCount, &r.Kind, &r.Reason, &r.At}, func() error {
		out = append(out, r)
		return nil
	})
	return out, d.classify(err)
}

func (d *pgDriver) Archived(ctx context.Context, queue string, limit int) ([]driver.ArchivedRow, error) {
	rows, err := d.pool.Query(ctx, qArchiveList, queue, limit)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []driver.ArchivedRow
	var r driver.ArchivedRow
	_, err = pgx.ForEachRow(rows, []any{&r.Queue, &r.MessageID, &r.Body, &r.Attributes, &r.GroupID, &r.ReceiveCount, &r.SentAt, &r.DeletedAt}, func() error {
		out = append(out, r)
		r.Attributes = nil // a fresh slice for the next row
		return nil
	})
	return out, d.classify(err)
}

func (d *pgDriver) RegisterReceiver(ctx context.Context, r driver.ReceiverRow) error {
	_, err := d.pool.Exec(ctx, qRegisterReceiver, r.ID, r.Queue, r.Host, r.PID)
	return d.classify(err)
}

func (d *pgDriver) RemoveReceiver(ctx context.Context, id string) error {
	_, err := d.pool.Exec(ctx, qRemoveReceiver, id)
	return d.classify(err)
}

func (d *pgDriver) Receivers(ctx context.Context, _ time.Time) ([]driver.ReceiverRow, error) {
	rows, err := d.pool.Query(ctx, qReceivers)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []driver.ReceiverRow
	var r driver.ReceiverRow
	_, err = pgx.ForEachRow(rows, []any{&r.ID, &r.Queue, &r.Host, &r.PID, &r.StartedAt, &r.LastSeen, &r.SinceSeen, &r.InFlight}, func() error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, d.classify(err)
	}
	return out, nil
}
