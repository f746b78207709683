package postgres

import (
	"context"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

func (d *pgDriver) SweepQueues(ctx context.Context, _ time.Time) ([]driver.SweepQueue, error) {
	rows, err := d.pool.Query(ctx, qSweepQueues)
	if err != nil {
		return nil, d.classify(err)
	}
	var qs []driver.SweepQueue
	var q driver.SweepQueue
	var retention int32
	_, err = pgx.ForEachRow(rows, []any{&q.ID, &q.Name, &q.DeadLetterQueueID, &q.DeadLetterQueue, &q.MaxReceiveCount, &retention,
		&q.Priority, &q.SweptAt, &q.Now}, func() error {
		q.Retention = time.Duration(retention) * time.Second
		qs = append(qs, q)
		return nil
	})
	return qs, d.classify(err)
}

func (d *pgDriver) SweepLapsed(ctx context.Context, q *driver.SweepQueue, from driver.LapsedCursor, limit int) (driver.LapsedStep, error) {
	after, id := from.Deadline, from.ID
	if after.IsZero() {
		after, id = q.SweptAt, math.MaxInt64 // deadlines after the last sweep's reach
	}
	var st driver.LapsedStep
	var looked int
	var last time.Time
	var lastID int64
	if err := d.pool.QueryRow(ctx, qSweepLapsed, q.ID, int16(from.Priority), after, id, q.Now, limit, q.DeadLetterQueueID,
		q.MaxReceiveCount, q.Name, driver.DeadLetterReason(q.MaxReceiveCount, q.DeadLetterQueue), string(sqlmailbox.AuditDeadLettered),
		string(sqlmailbox.AuditLeaseExpired), driver.ReasonLeaseExpired).Scan(&st.Recovered, &st.Failed, &looked, &last, &lastID); err != nil {
		return st, d.classify(err)
	}
	st.Next = driver.LapsedCursor{Priority: from.Priority, Deadline: last, ID: lastID}
	if looked < limit {
		st.Next = from.NextPriority(q)
	}
	if st.Failed > 0 {
		return st, d.classify(d.notes.notify(ctx, q.DeadLetterQueueID, st.Failed))
	}
	return st, nil
}

func (d *pgDriver) MarkSwept(ctx context.Context, q *driver.SweepQueue) error {
	_, err := d.pool.Exec(ctx, qSwept, q.ID, q.Now)
	return d.classify(err)
}

func (d *pgDriver) SweepRetention(ctx context.Context, q *driver.SweepQueue, limit int) (int, bool, error) {
	var n int
	err := d.pool.QueryRow(ctx, qSweepRetention, q.ID, q.Now.Add(-q.Retention), q.Name, driver.RetentionReason(q.Retention),
		string(sqlmailbox.AuditRetention), limit).Scan(&n)
	return n, n == limit, d.classify(err)
}

func (d *pgDriver) Trim(ctx context.Context, t driver.Table, _ time.Time, age time.Duration, limit int) (int, error) {
	tag, err := d.pool.Exec(ctx, [...]string{driver.AuditTable: qTrimAudit, driver.ArchiveTable: qTrimArchive,
		driver.AckedTable: qTrimAcked, driver.ReceiverTable: qTrimReceivers}[t], age.Microseconds(), limit)
	return int(tag.RowsAffected()), d.classify(err)
}

func (d *pgDriver) TrimDedup(ctx context.Context, _ time.Time, from driver.DedupCursor, limit int) (int, driver.DedupCursor, error) {
	var n, looked int
	var next driver.DedupCursor
	if err := d.pool.QueryRow(ctx, qTrimDedup, from.QueueID, from.ID, limit).Scan(&n, &looked, &next.QueueID, &next.ID); err != nil {
		return 0, from, d.classify(err)
	}
	next.Done = looked < limit
	return n, next, nil
}

func (d *pgDriver) Audit(ctx context.Context, queue string, limit int) ([]driver.AuditRow, error) {
	return d.auditRows(ctx, qAuditList, queue, limit)
}

// auditRows reads the audit rows a query (qAuditList, qMessageAudit)
// returns, in its order.
func (d *pgDriver) auditRows(ctx context.Context, query string, args ...any) ([]driver.AuditRow, error) {
	rows, err := d.pool.Query(ctx, query, args...)
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
