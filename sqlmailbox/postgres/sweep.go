package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// Sweep sweeps each queue in statements of its own (lapsed leases, then
// retention in chunks of 1,000), so no lock is held for long, then trims
// the other tables.
func (d *driver) Sweep(ctx context.Context, a sqlmailbox.SweepArgs) (sqlmailbox.SweepStats, error) {
	var st sqlmailbox.SweepStats
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
			sqlmailbox.DeadLetterReason(q.maxReceives, q.deadLetterQueue), sqlmailbox.AuditDeadLettered,
			sqlmailbox.AuditLeaseExpired, sqlmailbox.ReasonLeaseExpired).Scan(&recovered, &failed); err != nil {
			return st, d.classify(err)
		}
		st.ExpiredFound += int(recovered + failed)
		st.Recovered += int(recovered)
		st.Failed += int(failed)
		if failed > 0 {
			if _, err := d.pool.Exec(ctx, qNotify, q.dlq); err != nil {
				return st, d.classify(err)
			}
		}
		retention := time.Duration(q.retention) * time.Second
		why := sqlmailbox.RetentionReason(retention)
		for {
			var n int64
			if err := d.pool.QueryRow(ctx, qSweepRetention, q.id, q.now.Add(-retention), q.name, why, sqlmailbox.AuditRetention).Scan(&n); err != nil {
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
		{qTrimWorkers, a.WorkerRetention, &st.WorkersRemoved},
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

func (d *driver) Audit(ctx context.Context, queue string, limit int) ([]sqlmailbox.AuditRecord, error) {
	rows, err := d.pool.Query(ctx, qAuditList, queue, limit)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []sqlmailbox.AuditRecord
	var r sqlmailbox.AuditRecord
	_, err = pgx.ForEachRow(rows, []any{&r.Queue, &r.MessageID, &r.ReceiveCount, &r.Kind, &r.Reason, &r.At}, func() error {
		out = append(out, r)
		return nil
	})
	return out, d.classify(err)
}

func (d *driver) Archived(ctx context.Context, queue string, limit int) ([]sqlmailbox.ArchivedRow, error) {
	rows, err := d.pool.Query(ctx, qArchiveList, queue, limit)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []sqlmailbox.ArchivedRow
	var r sqlmailbox.ArchivedRow
	_, err = pgx.ForEachRow(rows, []any{&r.Queue, &r.MessageID, &r.Body, &r.Attributes, &r.MessageGroupID, &r.ReceiveCount, &r.SentAt, &r.DeletedAt}, func() error {
		out = append(out, r)
		r.Attributes = nil // a fresh slice for the next row
		return nil
	})
	return out, d.classify(err)
}

func (d *driver) RegisterWorker(ctx context.Context, w sqlmailbox.Worker) error {
	_, err := d.pool.Exec(ctx, qRegisterWorker, w.ID, w.Queue, w.Host, w.PID)
	return d.classify(err)
}

func (d *driver) RemoveWorker(ctx context.Context, id string) error {
	_, err := d.pool.Exec(ctx, qRemoveWorker, id)
	return d.classify(err)
}

func (d *driver) Workers(ctx context.Context, _ time.Time) ([]sqlmailbox.Worker, error) {
	rows, err := d.pool.Query(ctx, qWorkers)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []sqlmailbox.Worker
	var w sqlmailbox.Worker
	_, err = pgx.ForEachRow(rows, []any{&w.ID, &w.Queue, &w.Host, &w.PID, &w.StartedAt, &w.LastSeen, &w.SinceSeen, &w.InFlight}, func() error {
		out = append(out, w)
		return nil
	})
	if err != nil {
		return nil, d.classify(err)
	}
	return out, nil
}
