package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// sweepQueue is what Sweep needs of a queue.
type sweepQueue struct {
	rec       sqlmailbox.QueueRecord
	retention int64 // seconds
	sweptAt   int64
}

// Sweep sweeps each queue in a transaction of its own, so that no lock is
// held for long, then trims the other tables in one more.
func (d *driver) Sweep(ctx context.Context, a sqlmailbox.SweepArgs) (sqlmailbox.SweepStats, error) {
	var st sqlmailbox.SweepStats
	now := micros(a.Now)
	var queues []sweepQueue
	rows, err := d.db.QueryContext(ctx, qSweepQueues)
	if err != nil {
		return st, d.classify(err)
	}
	for rows.Next() {
		var q sweepQueue
		if err := rows.Scan(&q.rec.ID, &q.rec.Spec.Name, &q.rec.DeadLetterQueueID, &q.rec.DeadLetterQueue, &q.rec.Spec.MaxReceiveCount, &q.retention, &q.sweptAt); err != nil {
			rows.Close()
			return st, d.classify(err)
		}
		queues = append(queues, q)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return st, d.classify(err)
	}
	for _, q := range queues {
		if err := d.tx(ctx, func(tx *sql.Tx) error { return sweepQueueTx(ctx, tx, q, now, &st) }); err != nil {
			return st, err
		}
		st.Queues++
	}
	err = d.tx(ctx, func(tx *sql.Tx) error {
		for _, t := range []struct {
			q      string
			cutoff int64
			n      *int
		}{
			{qTrimDedup, now, &st.DeduplicationIDsPruned},
			{qTrimAudit, now - microsOf(a.AuditRetention), &st.AuditTrimmed},
			{qTrimArchive, now - microsOf(a.ArchiveRetention), &st.ArchiveTrimmed},
			{qTrimWorkers, now - microsOf(a.WorkerRetention), &st.WorkersRemoved},
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
// dead-letters the over-received), then deletes its messages past the
// retention period, oldest first.
func sweepQueueTx(ctx context.Context, tx *sql.Tx, q sweepQueue, now int64, st *sqlmailbox.SweepStats) error {
	type lapsed struct {
		id, count int64
		msgID     string
	}
	var ls []lapsed
	rows, err := tx.QueryContext(ctx, qLapsed, q.rec.ID, q.sweptAt, now)
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
		st.ExpiredFound++
		if q.rec.DeadLetterQueueID != 0 && int(l.count) >= q.rec.Spec.MaxReceiveCount {
			if err := deadLetter(ctx, tx, &q.rec, now, l.id, sqlmailbox.DeadLetterReason(q.rec.Spec.MaxReceiveCount, q.rec.DeadLetterQueue)); err != nil {
				return err
			}
			st.Failed++
			continue
		}
		if _, err := tx.ExecContext(ctx, qUnlease, q.rec.ID, l.id, l.count); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qAudit, q.rec.Spec.Name, l.msgID, l.count, sqlmailbox.AuditLeaseExpired,
			sqlmailbox.ReasonLeaseExpired, now); err != nil {
			return err
		}
		st.Recovered++
	}
	if _, err := tx.ExecContext(ctx, qSwept, q.rec.ID, now); err != nil {
		return err
	}
	return dropExpired(ctx, tx, q, now, st)
}

// dropExpired deletes q's messages sent before its retention period, in id
// order (the order they were sent), until it meets one still within it.
func dropExpired(ctx context.Context, tx *sql.Tx, q sweepQueue, now int64, st *sqlmailbox.SweepStats) error {
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
			if _, err := tx.ExecContext(ctx, qAudit, q.rec.Spec.Name, o.msgID, o.count, sqlmailbox.AuditRetention,
				sqlmailbox.RetentionReason(time.Duration(q.retention)*time.Second), now); err != nil {
				return err
			}
			st.RetentionDeleted++
		}
		if len(batch) == 0 {
			return nil
		}
	}
}

func (d *driver) Audit(ctx context.Context, queue string, limit int) ([]sqlmailbox.AuditRecord, error) {
	rows, err := d.db.QueryContext(ctx, qAuditList, queue, limit)
	if err != nil {
		return nil, d.classify(err)
	}
	defer rows.Close()
	var out []sqlmailbox.AuditRecord
	for rows.Next() {
		var r sqlmailbox.AuditRecord
		var at int64
		if err := rows.Scan(&r.Queue, &r.MessageID, &r.ReceiveCount, &r.Kind, &r.Reason, &at); err != nil {
			return nil, err
		}
		r.At = fromMicros(at)
		out = append(out, r)
	}
	return out, rows.Err()
}

func (d *driver) Archived(ctx context.Context, queue string, limit int) ([]sqlmailbox.ArchivedRow, error) {
	rows, err := d.db.QueryContext(ctx, qArchiveList, queue, limit)
	if err != nil {
		return nil, d.classify(err)
	}
	defer rows.Close()
	var out []sqlmailbox.ArchivedRow
	for rows.Next() {
		var r sqlmailbox.ArchivedRow
		var sent, deleted int64
		if err := rows.Scan(&r.Queue, &r.MessageID, &r.Body, &r.Attributes, &r.MessageGroupID, &r.ReceiveCount, &sent, &deleted); err != nil {
			return nil, err
		}
		r.SentAt, r.DeletedAt = fromMicros(sent), fromMicros(deleted)
		out = append(out, r)
	}
	return out, rows.Err()
}

func (d *driver) RegisterWorker(ctx context.Context, w sqlmailbox.Worker) error {
	_, err := d.db.ExecContext(ctx, qRegisterWorker, w.ID, w.Queue, w.Host, w.PID, micros(w.StartedAt), micros(w.LastSeen))
	return d.classify(err)
}

func (d *driver) RemoveWorker(ctx context.Context, id string) error {
	_, err := d.db.ExecContext(ctx, qRemoveWorker, id)
	return d.classify(err)
}

func (d *driver) Workers(ctx context.Context, now time.Time) ([]sqlmailbox.Worker, error) {
	rows, err := d.db.QueryContext(ctx, qWorkers, micros(now))
	if err != nil {
		return nil, d.classify(err)
	}
	defer rows.Close()
	var out []sqlmailbox.Worker
	for rows.Next() {
		var w sqlmailbox.Worker
		var started, seen int64
		if err := rows.Scan(&w.ID, &w.Queue, &w.Host, &w.PID, &started, &seen, &w.InFlight); err != nil {
			return nil, err
		}
		w.StartedAt, w.LastSeen = fromMicros(started), fromMicros(seen)
		w.SinceSeen = now.Sub(w.LastSeen)
		out = append(out, w)
	}
	return out, rows.Err()
}
