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
			string(sqlmailbox.AuditLeaseExpired), driver.ReasonLeaseExpired, levels[1]).Scan(&recovered, &failed); err != nil {
			return st, d.classify(err)
		}
		if _, err := d.pool.Exec(ctx, qSwept, q.id, q.now); err != nil {
			return st, d.classify(err)
		}
		st.ExpiredFound += int(recovered + failed)
		st.Recovered += int(recovered)
		st.Failed += int(failed)
		if recovered+failed > 0 {
			st.ByQueue = append(st.ByQueue, driver.QueueSweep{Queue: q.name, ExpiredFound: int(recovered + failed), Recovered: int(recovered), Failed: int(failed)})
		}
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
	var tallies int // the acked tally's hours: not reported
	for _, t := range []struct {
		q   string
		age time.Duration
		n   *int
	}{
		{qTrimDedup, 0, &st.DeduplicationIDsPruned},
		{qTrimAudit, a.AuditRetention, &st.AuditTrimmed},
		{qTrimAcked, a.AuditRetention, &tallies},
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

func (d *pgDriver) InFlight(ctx context.Context, q *driver.QueueRecord, _ time.Time, limit int) ([]driver.InFlightRow, error) {
	rows, err := d.pool.Query(ctx, qInFlight, q.ID, limit)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []driver.InFlightRow
	var m driver.InFlightRow
	r := &m.Receiver
	_, err = pgx.ForEachRow(rows, []any{&m.MessageID, &m.GroupID, &m.ReceiveCount, &m.SentAt, &m.ReceivedAt, &m.Deadline,
		&m.ExtendedAt, &m.SinceRenewed, &m.PastDeadline, &r.ID, &m.HasReceiver, &r.Queue, &r.Host, &r.PID, &r.StartedAt,
		&r.LastSeen, &r.SinceSeen}, func() error {
		if m.ExtendedAt.Equal(epoch) {
			m.ExtendedAt = time.Time{}
		}
		out = append(out, m)
		return nil
	})
	return out, d.classify(err)
}

// epoch is 'epoch', the zero of the queries' coalesce for a time that is
// not there.
var epoch = time.Unix(0, 0)

func (d *pgDriver) LeaseStats(ctx context.Context, q *driver.QueueRecord, _, since time.Time) (driver.LeaseStatsRow, error) {
	var st driver.LeaseStatsRow
	rows, err := d.pool.Query(ctx, qLeaseStats, q.ID, q.Spec.Name, since, string(sqlmailbox.AuditLeaseExpired),
		string(sqlmailbox.AuditFailure), string(sqlmailbox.AuditDeadLettered))
	if err != nil {
		return st, d.classify(err)
	}
	var what string
	var count int
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&what, &count, &n}, func() error {
		st.Add(what, count, n)
		return nil
	})
	return st, d.classify(err)
}

func (d *pgDriver) AddAcked(ctx context.Context, counts []driver.AckedCount) error {
	n := len(counts)
	queues, hours, receives, messages := make([]int64, n), make([]time.Time, n), make([]int32, n), make([]int64, n)
	for i, c := range counts {
		queues[i], hours[i], receives[i], messages[i] = c.QueueID, c.Hour, int32(c.ReceiveCount), c.Messages
	}
	_, err := d.pool.Exec(ctx, qAddAcked, queues, hours, receives, messages)
	return d.classify(err)
}
