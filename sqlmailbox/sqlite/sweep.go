package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// sweepQueue is what Sweep needs of a queue.
type sweepQueue struct {
	rec       driver.QueueRecord
	retention int64 // seconds
	sweptAt   int64
}

// Sweep sweeps each queue in a transaction of its own, so that no lock is
// held for long, then trims the other tables in one more.
func (d *sqliteDriver) Sweep(ctx context.Context, a driver.SweepArgs) (driver.SweepCounts, error) {
	var st driver.SweepCounts
	now := micros(a.Now)
	var queues []sweepQueue
	if err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, qSweepQueues)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var q sweepQueue
			if err := rows.Scan(&q.rec.ID, &q.rec.Spec.Name, &q.rec.DeadLetterQueueID, &q.rec.DeadLetterQueue, &q.rec.Spec.MaxReceiveCount, &q.retention, &q.sweptAt); err != nil {
				return err
			}
			queues = append(queues, q)
		}
		return rows.Err()
	}); err != nil {
		return st, err
	}
	for _, q := range queues {
		var qs driver.QueueSweep
		if err := d.tx(ctx, func(tx *sql.Tx) error {
			qs = driver.QueueSweep{Queue: q.rec.Spec.Name}
			return sweepQueueTx(ctx, tx, q, now, &qs, &st.RetentionDeleted)
		}); err != nil {
			return st, err
		}
		st.ExpiredFound += qs.ExpiredFound
		st.Recovered += qs.Recovered
		st.Failed += qs.Failed
		if qs.ExpiredFound > 0 {
			st.ByQueue = append(st.ByQueue, qs)
		}
		st.Queues++
	}
	var tallies int // the acked tally's hours: not reported
	err := d.tx(ctx, func(tx *sql.Tx) error {
		for _, t := range []struct {
			q      string
			cutoff int64
			n      *int
		}{
			{qTrimDedup, now, &st.DeduplicationIDsPruned},
			{qTrimAudit, now - microsOf(a.AuditRetention), &st.AuditTrimmed},
			{qTrimAcked, now - microsOf(a.AuditRetention), &tallies},
			{qTrimArchive, now - microsOf(a.ArchiveRetention), &st.ArchiveTrimmed},
			{qTrimReceivers, now - microsOf(a.ReceiverRetention), &st.ReceiversRemoved},
		} {
			res, err := tx.ExecContext(ctx, t.q, t.cutoff)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			*t.n = int(n)
			if err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}

// sweepQueueTx audits the leases of q that lapsed since its last sweep (and
// dead-letters the over-received), counting them in qs, then deletes its
// messages past the retention period, oldest first, counting them in
// retained.
func sweepQueueTx(ctx context.Context, tx *sql.Tx, q sweepQueue, now int64, qs *driver.QueueSweep, retained *int) error {
	type lapsed struct {
		id, count int64
		msgID     string
	}
	var ls []lapsed
	rows, err := tx.QueryContext(ctx, lapsedQuery, q.rec.ID, q.sweptAt, now)
	if err != nil {
		return err
	}
	for rows.Next() {
		var l lapsed
		if err := rows.Scan(&l.id, &l.msgID, &l.count); err != nil {
			rows.Close()
			return err
		}
		ls = append(ls, l)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, l := range ls {
		qs.ExpiredFound++
		if q.rec.DeadLetterQueueID != 0 && int(l.count) >= q.rec.Spec.MaxReceiveCount {
			if err := deadLetter(ctx, tx, &q.rec, now, l.id, driver.DeadLetterReason(q.rec.Spec.MaxReceiveCount, q.rec.DeadLetterQueue)); err != nil {
				return err
			}
			qs.Failed++
			continue
		}
		if _, err := tx.ExecContext(ctx, qUnlease, q.rec.ID, l.id, l.count); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qAudit, q.rec.Spec.Name, l.msgID, l.count, string(sqlmailbox.AuditLeaseExpired),
			driver.ReasonLeaseExpired, now); err != nil {
			return err
		}
		qs.Recovered++
	}
	if _, err := tx.ExecContext(ctx, qSwept, q.rec.ID, now); err != nil {
		return err
	}
	return dropExpired(ctx, tx, q, now, retained)
}

// dropExpired deletes q's messages sent before its retention period, in id
// order (the order they were sent), until it meets one still within it,
// counting them in deleted.
func dropExpired(ctx context.Context, tx *sql.Tx, q sweepQueue, now int64, deleted *int) error {
	cutoff := now - q.retention*int64(time.Second/time.Microsecond)
	for {
		type old struct {
			id, count, sent int64
			msgID           string
		}
		var batch []old
		rows, err := tx.QueryContext(ctx, qOldest, q.rec.ID)
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
			if _, err := tx.ExecContext(ctx, qDropMsg, q.rec.ID, o.id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, qAudit, q.rec.Spec.Name, o.msgID, o.count, string(sqlmailbox.AuditRetention),
				driver.RetentionReason(time.Duration(q.retention)*time.Second), now); err != nil {
				return err
			}
			*deleted++
		}
		if len(batch) == 0 {
			return nil
		}
	}
}

func (d *sqliteDriver) Audit(ctx context.Context, queue string, limit int) ([]driver.AuditRow, error) {
	var out []driver.AuditRow
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, qAuditList, queue, limit)
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
