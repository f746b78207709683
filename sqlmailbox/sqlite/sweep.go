package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

func (d *sqliteDriver) SweepQueues(ctx context.Context, now time.Time) ([]driver.SweepQueue, error) {
	var qs []driver.SweepQueue
	err := d.read(ctx, func(tx *sql.Tx) error {
		qs = nil
		rows, err := tx.QueryContext(ctx, qSweepQueues)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			q := driver.SweepQueue{Now: now}
			var retention, swept int64
			if err := rows.Scan(&q.ID, &q.Name, &q.DeadLetterQueueID, &q.DeadLetterQueue, &q.MaxReceiveCount, &retention, &q.Priority, &swept); err != nil {
				return err
			}
			q.Retention, q.SweptAt = time.Duration(retention)*time.Second, fromMicros(swept)
			qs = append(qs, q)
		}
		return rows.Err()
	})
	return qs, err
}

func (d *sqliteDriver) SweepLapsed(ctx context.Context, q *driver.SweepQueue, from driver.LapsedCursor, limit int) (driver.LapsedStep, error) {
	after, id := micros(from.Deadline), from.ID
	if from.Deadline.IsZero() {
		after, id = micros(q.SweptAt), math.MaxInt64 // deadlines after the last sweep's reach
	}
	now := micros(q.Now)
	rec := driver.QueueRecord{ID: q.ID, Spec: sqsloop.QueueSpec{Name: q.Name, MaxReceiveCount: q.MaxReceiveCount},
		DeadLetterQueueID: q.DeadLetterQueueID, DeadLetterQueue: q.DeadLetterQueue}
	var st driver.LapsedStep
	err := d.tx(ctx, func(tx *sql.Tx) error {
		st = driver.LapsedStep{}
		type lapsed struct {
			id, count, deadline int64
			msgID               string
		}
		var ls []lapsed
		rows, err := tx.QueryContext(ctx, qLapsed, q.ID, from.Priority, after, id, now, limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var l lapsed
			if err := rows.Scan(&l.id, &l.msgID, &l.count, &l.deadline); err != nil {
				rows.Close()
				return err
			}
			ls = append(ls, l)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, l := range ls {
			if q.DeadLetterQueueID != 0 && int(l.count) >= q.MaxReceiveCount {
				if err := deadLetter(ctx, tx, &rec, now, l.id, driver.DeadLetterReason(q.MaxReceiveCount, q.DeadLetterQueue)); err != nil {
					return err
				}
				st.Failed++
				continue
			}
			if _, err := tx.ExecContext(ctx, qUnlease, q.ID, l.id, l.count); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, qAudit, q.Name, l.msgID, l.count, string(sqlmailbox.AuditLeaseExpired),
				driver.ReasonLeaseExpired, now); err != nil {
				return err
			}
			st.Recovered++
		}
		st.Next = from.NextPriority(q)
		if len(ls) == limit {
			last := ls[len(ls)-1]
			st.Next = driver.LapsedCursor{Priority: from.Priority, Deadline: fromMicros(last.deadline), ID: last.id}
		}
		return nil
	})
	return st, err
}

func (d *sqliteDriver) MarkSwept(ctx context.Context, q *driver.SweepQueue) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, qSwept, q.ID, micros(q.Now))
		return err
	})
}

// SweepRetention deletes q's oldest messages, in id order (the order they
// were sent), until it meets one sent within the retention period or has
// deleted limit.
func (d *sqliteDriver) SweepRetention(ctx context.Context, q *driver.SweepQueue, limit int) (int, bool, error) {
	now := micros(q.Now)
	cutoff := micros(q.Now.Add(-q.Retention))
	why := driver.RetentionReason(q.Retention)
	var deleted int
	var more bool
	err := d.tx(ctx, func(tx *sql.Tx) error {
		deleted, more = 0, false
		type old struct {
			id, count, sent int64
			msgID           string
		}
		var batch []old
		rows, err := tx.QueryContext(ctx, qOldest, q.ID, limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var o old
			if err := rows.Scan(&o.id, &o.msgID, &o.count, &o.sent); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, o)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, o := range batch {
			if o.sent >= cutoff {
				return nil
			}
			if _, err := tx.ExecContext(ctx, qDropMsg, q.ID, o.id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, qAudit, q.Name, o.msgID, o.count, string(sqlmailbox.AuditRetention), why, now); err != nil {
				return err
			}
			deleted++
		}
		more = len(batch) == limit
		return nil
	})
	return deleted, more, err
}

func (d *sqliteDriver) Trim(ctx context.Context, t driver.Table, now time.Time, age time.Duration, limit int) (int, error) {
	var n int64
	err := d.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, [...]string{driver.AuditTable: qTrimAudit, driver.ArchiveTable: qTrimArchive,
			driver.AckedTable: qTrimAcked, driver.ReceiverTable: qTrimReceivers}[t], micros(now.Add(-age)), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

func (d *sqliteDriver) TrimDedup(ctx context.Context, now time.Time, from driver.DedupCursor, limit int) (int, driver.DedupCursor, error) {
	pruned, next := 0, from
	err := d.tx(ctx, func(tx *sql.Tx) error {
		pruned, next = 0, from
		type key struct {
			queue   int64
			id      string
			expires int64
		}
		var page []key
		rows, err := tx.QueryContext(ctx, qDedupPage, from.QueueID, from.ID, limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k key
			if err := rows.Scan(&k.queue, &k.id, &k.expires); err != nil {
				rows.Close()
				return err
			}
			page = append(page, k)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, k := range page {
			if k.expires > micros(now) {
				continue
			}
			if _, err := tx.ExecContext(ctx, qDedupDrop, k.queue, k.id); err != nil {
				return err
			}
			pruned++
		}
		next.Done = len(page) < limit
		if len(page) > 0 {
			next.QueueID, next.ID = page[len(page)-1].queue, page[len(page)-1].id
		}
		return nil
	})
	return pruned, next, err
}

func (d *sqliteDriver) Audit(ctx context.Context, queue string, limit int) ([]driver.AuditRow, error) {
	return d.auditRows(ctx, qAuditList, queue, limit)
}

// auditRows reads the audit rows a query (qAuditList, qMessageAudit)
// returns, in its order, in a read transaction (from scratch when the
// read is tried again).
func (d *sqliteDriver) auditRows(ctx context.Context, query string, args ...any) ([]driver.AuditRow, error) {
	var out []driver.AuditRow
	err := d.read(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r driver.AuditRow
			var at int64
			if err := rows.Scan(&r.Queue, &r.MessageID, &r.ReceiveCount, &r.Kind, &r.Reason, &at); err != nil {
				return err
			}
			r.At = fromMicros(at)
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

func (d *sqliteDriver) Archived(ctx context.Context, queue string, limit int) ([]driver.ArchivedRow, error) {
	var out []driver.ArchivedRow
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, qArchiveList, queue, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r driver.ArchivedRow
			var sent, deleted int64
			if err := rows.Scan(&r.Queue, &r.MessageID, &r.Body, &r.Attributes, &r.GroupID, &r.ReceiveCount, &sent, &deleted); err != nil {
				return err
			}
			r.SentAt, r.DeletedAt = fromMicros(sent), fromMicros(deleted)
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

func (d *sqliteDriver) RegisterReceiver(ctx context.Context, r driver.ReceiverRow) error {
	_, err := d.db.ExecContext(ctx, qRegisterReceiver, r.ID, r.Queue, r.Host, r.PID, micros(r.StartedAt), micros(r.LastSeen))
	return d.classify(err)
}

func (d *sqliteDriver) RemoveReceiver(ctx context.Context, id string) error {
	_, err := d.db.ExecContext(ctx, qRemoveReceiver, id)
	return d.classify(err)
}

func (d *sqliteDriver) Receivers(ctx context.Context, now time.Time) ([]driver.ReceiverRow, error) {
	var out []driver.ReceiverRow
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, qReceivers, micros(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r driver.ReceiverRow
			var started, seen int64
			if err := rows.Scan(&r.ID, &r.Queue, &r.Host, &r.PID, &started, &seen, &r.InFlight); err != nil {
				return err
			}
			r.StartedAt, r.LastSeen = fromMicros(started), fromMicros(seen)
			r.SinceSeen = now.Sub(r.LastSeen)
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

func (d *sqliteDriver) InFlight(ctx context.Context, q *driver.QueueRecord, now time.Time, limit int) ([]driver.InFlightRow, error) {
	var out []driver.InFlightRow
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, qInFlight, q.ID, limit, micros(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m driver.InFlightRow
			r := &m.Receiver
			var sent, received, deadline, extended, renewed, started, seen int64
			if err := rows.Scan(&m.MessageID, &m.GroupID, &m.ReceiveCount, &sent, &received, &deadline, &extended, &renewed,
				&m.PastDeadline, &r.ID, &m.HasReceiver, &r.Queue, &r.Host, &r.PID, &started, &seen); err != nil {
				return err
			}
			m.SentAt, m.ReceivedAt, m.Deadline = fromMicros(sent), fromMicros(received), fromMicros(deadline)
			if extended != 0 {
				m.ExtendedAt = fromMicros(extended)
			}
			m.SinceRenewed = now.Sub(fromMicros(renewed))
			if m.HasReceiver {
				r.StartedAt, r.LastSeen = fromMicros(started), fromMicros(seen)
				r.SinceSeen = now.Sub(r.LastSeen)
			}
			out = append(out, m)
		}
		return rows.Err()
	})
	return out, err
}

func (d *sqliteDriver) LeaseStats(ctx context.Context, q *driver.QueueRecord, now, since time.Time) (driver.LeaseStatsRow, error) {
	var st driver.LeaseStatsRow
	err := d.read(ctx, func(tx *sql.Tx) error {
		st = driver.LeaseStatsRow{}
		rows, err := tx.QueryContext(ctx, qLeaseStats, q.ID, q.Spec.Name, micros(since), micros(now), string(sqlmailbox.AuditLeaseExpired),
			string(sqlmailbox.AuditFailure), string(sqlmailbox.AuditDeadLettered))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var what string
			var count int
			var n int64
			if err := rows.Scan(&what, &count, &n); err != nil {
				return err
			}
			st.Add(what, count, n)
		}
		return rows.Err()
	})
	return st, err
}

func (d *sqliteDriver) AddAcked(ctx context.Context, counts []driver.AckedCount) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		for _, c := range counts {
			if _, err := tx.ExecContext(ctx, qAddAcked, c.QueueID, micros(c.Hour), c.ReceiveCount, c.Messages); err != nil {
				return err
			}
		}
		return nil
	})
}
