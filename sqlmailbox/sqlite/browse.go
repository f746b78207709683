package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// The operator's half (driver.Browser): its SQL, apart from queries.go's
// because no receive, ack or sweep runs it. A message is held when
// visible_at > now AND receive_count > 0 (as qCounts counts in flight).
const (
	// qSummaries reads each queue's counts, oldest send time and groups in
	// flight (?1: now).
	qSummaries = `SELECT q.name,
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = q.id AND visible_at <= ?1),
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = q.id AND visible_at > ?1 AND receive_count > 0),
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = q.id AND visible_at > ?1 AND receive_count = 0),
	coalesce((SELECT min(sent_at) FROM sqsloop_messages WHERE queue_id = q.id), 0),
	(SELECT count(DISTINCT group_id) FROM sqsloop_messages WHERE queue_id = q.id AND visible_at > ?1 AND receive_count > 0 AND group_id <> '')
	FROM sqsloop_queues q ORDER BY q.name`
	// qBrowse reads queue ?1's messages after key ?2, held or not at ?3,
	// matching {filter}, in key order, ?4 at most.
	qBrowse = `SELECT id, message_id, body, attributes, group_id, dedup_id, priority, receive_count, sent_at,
	coalesce(first_received_at, 0), visible_at, visible_at > ?3 AND receive_count > 0
	FROM sqsloop_messages WHERE queue_id = ?1 AND id > ?2 {filter} ORDER BY id LIMIT ?4`
	qCountMatching = `SELECT count(*) FROM sqsloop_messages WHERE queue_id = ?1 {filter}`
	// qPickRows: of the keys ?2 (a JSON array), those of queue ?1's
	// messages not held at ?3.
	qPickRows = `SELECT id FROM sqsloop_messages
	WHERE queue_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND (visible_at <= ?3 OR receive_count = 0) ORDER BY id`
	// qAuditRows audits the picked rows ?2 of queue ?1 (named ?3): kind
	// ?4, reason ?5, at ?6.
	qAuditRows = `INSERT INTO sqsloop_audit (queue, message_id, receive_count, kind, reason, at)
	SELECT ?3, message_id, receive_count, ?4, ?5, ?6 FROM sqsloop_messages
	WHERE queue_id = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY id`
	// qCopyRows copies the picked rows ?2 of queue ?1 to queue ?3, sent
	// and visible at ?4, keeping their priority when ?5, in key order.
	qCopyRows = `INSERT INTO sqsloop_messages (queue_id, message_id, body, attributes, group_id, dedup_id, sent_at, visible_at, priority)
	SELECT ?3, message_id, body, attributes, group_id, dedup_id, ?4, ?4, CASE WHEN ?5 THEN priority ELSE 0 END FROM sqsloop_messages
	WHERE queue_id = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY id`
	qDeleteRows   = `DELETE FROM sqsloop_messages WHERE queue_id = ?1 AND id IN (SELECT value FROM json_each(?2))`
	qMessageAudit = `SELECT queue, message_id, receive_count, kind, reason, at FROM sqsloop_audit
	WHERE message_id = ?1 ORDER BY id DESC LIMIT ?2`
)

// filterSQL returns f as conditions to AND after a WHERE, with their
// arguments numbered from ?first on. An attribute's name becomes part of
// a JSON path: the caller allows only letters, digits, '_', '-' and '.'
// in it, so it cannot leave its quotes.
func filterSQL(f driver.Filter, first int) (string, []any) {
	var b strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "?" + strconv.Itoa(first+len(args)-1)
	}
	if f.MessageID != "" {
		b.WriteString(" AND message_id = " + arg(f.MessageID))
	}
	if f.BodyContains != "" {
		b.WriteString(" AND instr(body, " + arg(f.BodyContains) + ") > 0")
	}
	if f.Attribute != "" {
		// A BLOB is JSONB to SQLite's JSON functions: the column holds
		// JSON text in one.
		if f.Value != "" {
			b.WriteString(` AND json_extract(CAST(attributes AS TEXT), '$."` + f.Attribute + `".s') = ` + arg(f.Value))
		} else {
			b.WriteString(` AND json_type(CAST(attributes AS TEXT), '$."` + f.Attribute + `"') IS NOT NULL`)
		}
	}
	if f.MinReceiveCount > 0 {
		b.WriteString(" AND receive_count >= " + arg(f.MinReceiveCount))
	}
	if f.MaxReceiveCount > 0 {
		b.WriteString(" AND receive_count <= " + arg(f.MaxReceiveCount))
	}
	if !f.SentAfter.IsZero() {
		b.WriteString(" AND sent_at > " + arg(micros(f.SentAfter)))
	}
	if !f.SentBefore.IsZero() {
		b.WriteString(" AND sent_at < " + arg(micros(f.SentBefore)))
	}
	if f.GroupID != "" {
		b.WriteString(" AND group_id = " + arg(f.GroupID))
	}
	return b.String(), args
}

func (d *sqliteDriver) QueueSummaries(ctx context.Context, now time.Time) ([]driver.QueueSummary, error) {
	var out []driver.QueueSummary
	err := d.read(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, qSummaries, micros(now))
		if err != nil {
			return err
		}
		var names []string
		for rows.Next() {
			var s driver.QueueSummary
			var name string
			var oldest int64
			if err := rows.Scan(&name, &s.Counts.Visible, &s.Counts.InFlight, &s.Counts.Delayed, &oldest, &s.GroupsInFlight); err != nil {
				rows.Close()
				return err
			}
			if oldest != 0 {
				s.OldestSentAt = fromMicros(oldest)
			}
			names = append(names, name)
			out = append(out, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, name := range names {
			if out[i].Queue, err = loadQueue(ctx, tx, name); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

func (d *sqliteDriver) Browse(ctx context.Context, q *driver.QueueRecord, now time.Time, f driver.Filter, after int64, limit int) ([]driver.StoredRow, error) {
	where, fargs := filterSQL(f, 5)
	query := strings.Replace(qBrowse, "{filter}", where, 1)
	args := append([]any{q.ID, after, micros(now), limit}, fargs...)
	var out []driver.StoredRow
	err := d.read(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r driver.StoredRow
			var sent, first, visible int64
			if err := rows.Scan(&r.ID, &r.MessageID, &r.Body, &r.Attributes, &r.GroupID, &r.DedupID, &r.Priority, &r.ReceiveCount,
				&sent, &first, &visible, &r.Held); err != nil {
				return err
			}
			r.SentAt, r.VisibleAt = fromMicros(sent), fromMicros(visible)
			if first != 0 {
				r.FirstReceivedAt = fromMicros(first)
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

func (d *sqliteDriver) CountMatching(ctx context.Context, q *driver.QueueRecord, _ time.Time, f driver.Filter) (int, error) {
	where, fargs := filterSQL(f, 2)
	query := strings.Replace(qCountMatching, "{filter}", where, 1)
	var n int
	err := d.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, query, append([]any{q.ID}, fargs...)...).Scan(&n)
	})
	return n, err
}

func (d *sqliteDriver) Move(ctx context.Context, from, to *driver.QueueRecord, now time.Time, ids []int64, a driver.AuditRow) ([]int64, error) {
	var moved []int64
	err := d.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if moved, err = pickRows(ctx, tx, from.ID, now, ids); err != nil || len(moved) == 0 {
			return err
		}
		picked := keysJSON(moved)
		if _, err := tx.ExecContext(ctx, qAuditRows, from.ID, picked, a.Queue, a.Kind, a.Reason, micros(now)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qCopyRows, from.ID, picked, to.ID, micros(now), to.Spec.Priority); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, qDeleteRows, from.ID, picked)
		return err
	})
	if err != nil {
		return nil, err
	}
	return moved, nil
}

func (d *sqliteDriver) DeleteRows(ctx context.Context, q *driver.QueueRecord, now time.Time, ids []int64, a driver.AuditRow) ([]int64, error) {
	var deleted []int64
	err := d.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if deleted, err = pickRows(ctx, tx, q.ID, now, ids); err != nil || len(deleted) == 0 {
			return err
		}
		picked := keysJSON(deleted)
		if _, err := tx.ExecContext(ctx, qAuditRows, q.ID, picked, a.Queue, a.Kind, a.Reason, micros(now)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, qDeleteRows, q.ID, picked)
		return err
	})
	if err != nil {
		return nil, err
	}
	return deleted, nil
}

// pickRows returns those of ids that are keys of queue's messages not held
// at now, ascending.
func pickRows(ctx context.Context, tx *sql.Tx, queue int64, now time.Time, ids []int64) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, qPickRows, queue, keysJSON(ids), micros(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// keysJSON returns ids as a JSON array, for json_each.
func keysJSON(ids []int64) string {
	b, _ := json.Marshal(ids) // integers: cannot fail
	return string(b)
}

func (d *sqliteDriver) MessageAudit(ctx context.Context, messageID string, limit int) ([]driver.AuditRow, error) {
	return d.auditRows(ctx, qMessageAudit, messageID, limit)
}

var _ driver.Browser = (*sqliteDriver)(nil)
