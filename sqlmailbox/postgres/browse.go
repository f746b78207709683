package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// The operator's half (driver.Browser): its SQL, apart from queries.go's
// because no receive, ack or sweep runs it. A message is held when
// visible_at > statement_timestamp() AND receive_count > 0 (as qCounts
// counts in flight). The attributes column holds JSON text in a bytea.
const (
	// qSummaries reads each queue's counts, oldest send time and groups
	// in flight, in one snapshot.
	qSummaries = `SELECT q.name,
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = q.id AND visible_at <= statement_timestamp()),
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = q.id AND visible_at > statement_timestamp() AND receive_count > 0),
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = q.id AND visible_at > statement_timestamp() AND receive_count = 0),
	coalesce((SELECT min(sent_at) FROM sqsloop_messages WHERE queue_id = q.id), 'epoch'),
	(SELECT count(DISTINCT group_id) FROM sqsloop_messages
		WHERE queue_id = q.id AND visible_at > statement_timestamp() AND receive_count > 0 AND group_id <> '')
	FROM sqsloop_queues q ORDER BY q.name`
	// qBrowse reads queue $1's messages after key $2 matching {filter},
	// in key order, $3 at most.
	qBrowse = `SELECT id, message_id, body, attributes, group_id, dedup_id, priority, receive_count, sent_at,
	coalesce(first_received_at, 'epoch'), visible_at, visible_at > statement_timestamp() AND receive_count > 0
	FROM sqsloop_messages WHERE queue_id = $1 AND id > $2 {filter} ORDER BY id LIMIT $3`
	qCountMatching = `SELECT count(*) FROM sqsloop_messages WHERE queue_id = $1 {filter}`
	// qGone deletes those of the keys $2 that are queue $1's messages
	// (checked on what it locked: see queries.go, messages named by id) and
	// not held (a receive taking one now is skipped: it will hold it), and
	// audits each under the name $3 with kind $4 and reason $5; qDeleteRows
	// and qMoveRows start with it.
	qGone = `WITH picked AS MATERIALIZED (
		SELECT id, queue_id FROM sqsloop_messages
		WHERE id = ANY($2::bigint[]) AND (visible_at <= statement_timestamp() OR receive_count = 0)
		ORDER BY id FOR UPDATE SKIP LOCKED
	), gone AS (
		DELETE FROM sqsloop_messages m WHERE m.id = ANY(ARRAY(SELECT id FROM picked WHERE queue_id = $1))
		RETURNING m.id, m.message_id, m.body, m.attributes, m.group_id, m.dedup_id, m.priority, m.receive_count
	), audit AS (
		INSERT INTO sqsloop_audit (queue, message_id, receive_count, kind, reason, at)
		SELECT $3, message_id, receive_count, $4, $5, statement_timestamp() FROM gone ORDER BY id
		RETURNING 1
	)`
	qDeleteRows = qGone + `
	SELECT id FROM gone ORDER BY id`
	// qMoveRows puts what qGone deleted in queue $6 (keeping priorities
	// when $7), new rows in key order, sent and visible now.
	qMoveRows = qGone + `, ins AS (
		INSERT INTO sqsloop_messages (queue_id, message_id, body, attributes, group_id, dedup_id, priority, sent_at, visible_at)
		SELECT $6, message_id, body, attributes, group_id, dedup_id, CASE WHEN $7 THEN priority ELSE 0 END,
			statement_timestamp(), statement_timestamp()
		FROM gone ORDER BY id
		RETURNING 1
	)
	SELECT id FROM gone ORDER BY id`
	qMessageAudit = `SELECT queue, message_id, receive_count, kind, reason, at FROM sqsloop_audit
	WHERE message_id = $1 ORDER BY id DESC LIMIT $2`
)

// filterSQL returns f as conditions to AND after a WHERE, with their
// arguments numbered from $first on.
func filterSQL(f driver.Filter, first int) (string, []any) {
	var b strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(first+len(args)-1)
	}
	if f.MessageID != "" {
		b.WriteString(" AND message_id = " + arg(f.MessageID))
	}
	if f.BodyContains != "" {
		b.WriteString(" AND strpos(body, " + arg(f.BodyContains) + "::text) > 0")
	}
	if f.Attribute != "" {
		attr := "convert_from(attributes, 'UTF8')::jsonb -> " + arg(f.Attribute) + "::text"
		if f.Value != "" {
			b.WriteString(" AND (" + attr + " ->> 's') = " + arg(f.Value) + "::text")
		} else {
			b.WriteString(" AND (" + attr + ") IS NOT NULL")
		}
	}
	if f.MinReceiveCount > 0 {
		b.WriteString(" AND receive_count >= " + arg(f.MinReceiveCount) + "::integer")
	}
	if f.MaxReceiveCount > 0 {
		b.WriteString(" AND receive_count <= " + arg(f.MaxReceiveCount) + "::integer")
	}
	if !f.SentAfter.IsZero() {
		b.WriteString(" AND sent_at > " + arg(f.SentAfter) + "::timestamptz")
	}
	if !f.SentBefore.IsZero() {
		b.WriteString(" AND sent_at < " + arg(f.SentBefore) + "::timestamptz")
	}
	if f.GroupID != "" {
		b.WriteString(" AND group_id = " + arg(f.GroupID) + "::text")
	}
	return b.String(), args
}

func (d *pgDriver) QueueSummaries(ctx context.Context, _ time.Time) ([]driver.QueueSummary, error) {
	rows, err := d.pool.Query(ctx, qSummaries)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []driver.QueueSummary
	var names []string
	var name string
	var visible, inFlight, delayed, groups int64
	var oldest time.Time
	_, err = pgx.ForEachRow(rows, []any{&name, &visible, &inFlight, &delayed, &oldest, &groups}, func() error {
		s := driver.QueueSummary{Counts: driver.Counts{Visible: int(visible), InFlight: int(inFlight), Delayed: int(delayed)},
			GroupsInFlight: int(groups)}
		if oldest.Unix() != 0 {
			s.OldestSentAt = oldest
		}
		names = append(names, name)
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, d.classify(err)
	}
	kept := out[:0]
	for i, name := range names {
		q, err := d.LoadQueue(ctx, name)
		if errors.Is(err, sqsloop.ErrQueueNotFound) {
			continue // deleted since
		}
		if err != nil {
			return nil, err
		}
		out[i].Queue = q
		kept = append(kept, out[i])
	}
	return kept, nil
}

func (d *pgDriver) Browse(ctx context.Context, q *driver.QueueRecord, _ time.Time, f driver.Filter, after int64, limit int) ([]driver.StoredRow, error) {
	where, fargs := filterSQL(f, 4)
	rows, err := d.pool.Query(ctx, strings.Replace(qBrowse, "{filter}", where, 1), append([]any{q.ID, after, limit}, fargs...)...)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []driver.StoredRow
	var r driver.StoredRow
	var prio int16
	_, err = pgx.ForEachRow(rows, []any{&r.ID, &r.MessageID, &r.Body, &r.Attributes, &r.GroupID, &r.DedupID, &prio, &r.ReceiveCount,
		&r.SentAt, &r.FirstReceivedAt, &r.VisibleAt, &r.Held}, func() error {
		if r.FirstReceivedAt.Unix() == 0 {
			r.FirstReceivedAt = time.Time{}
		}
		r.Priority = int(prio)
		out = append(out, r)
		r.Attributes = nil // a fresh slice for the next row
		return nil
	})
	return out, d.classify(err)
}

func (d *pgDriver) CountMatching(ctx context.Context, q *driver.QueueRecord, _ time.Time, f driver.Filter) (int, error) {
	where, fargs := filterSQL(f, 2)
	var n int64
	err := d.pool.QueryRow(ctx, strings.Replace(qCountMatching, "{filter}", where, 1), append([]any{q.ID}, fargs...)...).Scan(&n)
	return int(n), d.classify(err)
}

func (d *pgDriver) Move(ctx context.Context, from, to *driver.QueueRecord, _ time.Time, ids []int64, a driver.AuditRow) ([]int64, error) {
	moved, err := d.changeRows(ctx, qMoveRows, from.ID, ids, a, to.ID, to.Spec.Priority)
	if err == nil && len(moved) > 0 {
		err = d.classify(d.notes.notify(ctx, to.ID, len(moved)))
	}
	return moved, err
}

func (d *pgDriver) DeleteRows(ctx context.Context, q *driver.QueueRecord, _ time.Time, ids []int64, a driver.AuditRow) ([]int64, error) {
	deleted, err := d.changeRows(ctx, qDeleteRows, q.ID, ids, a)
	if err == nil && len(deleted) > 0 && q.Spec.FIFO {
		err = d.classify(d.notes.notify(ctx, q.ID, len(deleted))) // a group's next message may be receivable
	}
	return deleted, err
}

// changeRows runs qDeleteRows or qMoveRows (with more: its $6 and $7)
// and returns the keys it took.
func (d *pgDriver) changeRows(ctx context.Context, query string, queue int64, ids []int64, a driver.AuditRow, more ...any) ([]int64, error) {
	rows, err := d.pool.Query(ctx, query, append([]any{queue, ids, a.Queue, a.Kind, a.Reason}, more...)...)
	if err != nil {
		return nil, d.classify(err)
	}
	var out []int64
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		out = append(out, id)
		return nil
	})
	if err != nil {
		return nil, d.classify(err)
	}
	return out, nil
}

func (d *pgDriver) MessageAudit(ctx context.Context, messageID string, limit int) ([]driver.AuditRow, error) {
	return d.auditRows(ctx, qMessageAudit, messageID, limit)
}

var _ driver.Browser = (*pgDriver)(nil)
