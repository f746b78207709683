package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// Queries with the pick of each queue type in place.
var (
	qReceiveStandard = strings.Replace(qReceive, "$pick", qPickStandard, 1)
	qReceiveFIFO     = strings.Replace(qReceive, "$pick", qPickFIFO, 1)
)

func (d *driver) Send(ctx context.Context, q *sqlmailbox.QueueRecord, _ time.Time, msgs []sqlmailbox.NewMessage) ([]sqlmailbox.SendOutcome, error) {
	out := make([]sqlmailbox.SendOutcome, len(msgs))
	if q.Spec.FIFO {
		return out, d.sendFIFO(ctx, q, msgs, out)
	}
	n := len(msgs)
	ids, bodies, groups := make([]string, n), make([]string, n), make([]string, n)
	attrs, delays := make([][]byte, n), make([]int32, n)
	for i, m := range msgs {
		ids[i], bodies[i], attrs[i], groups[i], delays[i] = m.MessageID, m.Body, m.Attributes, m.GroupID, seconds(m.Delay)
		out[i].MessageID = m.MessageID
	}
	var stored int64
	var notified string
	if err := d.pool.QueryRow(ctx, qSend, q.ID, ids, bodies, attrs, groups, delays).Scan(&stored, &notified); err != nil {
		return nil, d.classify(err)
	}
	return out, nil
}

// sendFIFO stores a FIFO batch in one transaction, message by message, in
// order, each deduplicated against the window (and the batch).
func (d *driver) sendFIFO(ctx context.Context, q *sqlmailbox.QueueRecord, msgs []sqlmailbox.NewMessage, out []sqlmailbox.SendOutcome) error {
	return d.tx(ctx, func(tx pgx.Tx) error {
		for i, m := range msgs {
			var id *string
			var stored bool
			var seq int64
			if err := tx.QueryRow(ctx, qSendFIFO, q.ID, m.DedupID, m.MessageID, m.Body, m.Attributes, m.GroupID, seconds(m.Delay),
				seconds(sqlmailbox.DeduplicationWindow)).Scan(&id, &stored, &seq); err != nil {
				return err
			}
			if id == nil { // another transaction stored the ID after this statement began
				if err := tx.QueryRow(ctx, qDedupFind, q.ID, m.DedupID).Scan(&id, &seq); err != nil {
					return err
				}
			}
			if stored {
				if _, err := tx.Exec(ctx, qDedupSeq, q.ID, m.DedupID, seq); err != nil {
					return err
				}
			}
			out[i] = sqlmailbox.SendOutcome{MessageID: *id, Duplicate: !stored, Seq: seq}
		}
		_, err := tx.Exec(ctx, qNotify, q.ID)
		return err
	})
}

func (d *driver) Receive(ctx context.Context, q *sqlmailbox.QueueRecord, r sqlmailbox.ReceiveArgs) (sqlmailbox.ReceiveResult, error) {
	args := []any{q.ID, r.Max, seconds(r.Visibility), q.Spec.MaxReceiveCount, q.DeadLetterQueueID, r.Worker, q.Spec.Name,
		r.DeadLetterReason, sqlmailbox.AuditDeadLettered}
	var res sqlmailbox.ReceiveResult
	var err error
	if q.Spec.FIFO {
		err = d.tx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, qLockFIFO, q.ID); err != nil {
				return err
			}
			res, err = receive(ctx, tx, q, qReceiveFIFO, args)
			return err
		})
	} else {
		res, err = receive(ctx, d.pool, q, qReceiveStandard, args)
		err = d.classify(err)
	}
	if err == nil && res.DeadLettered > 0 {
		_, err = d.pool.Exec(ctx, qNotify, q.DeadLetterQueueID)
		err = d.classify(err)
	}
	return res, err
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// receive runs a receive query of q and reads its rows: first the one about
// the receive (see qReceive), then those taken.
func receive(ctx context.Context, db querier, q *sqlmailbox.QueueRecord, query string, args []any) (sqlmailbox.ReceiveResult, error) {
	var res sqlmailbox.ReceiveResult
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return res, err
	}
	defer rows.Close()
	for first := true; rows.Next(); first = false {
		var row sqlmailbox.ReceivedRow
		if err := rows.Scan(&row.ID, &row.MessageID, &row.Body, &row.Attributes, &row.GroupID, &row.DedupID,
			&row.SentAt, &row.FirstReceivedAt, &row.ReceiveCount); err != nil {
			return res, err
		}
		if !first {
			res.Rows = append(res.Rows, row)
			continue
		}
		res.DeadLettered = int(row.ID)
		if row.ReceiveCount == 0 {
			return res, fmt.Errorf("queue %q: %w", q.Spec.Name, sqsloop.ErrQueueNotFound)
		}
		if next, now := row.SentAt, row.FirstReceivedAt; next.After(now) {
			// The server's deadline, as a time on this process's clock: the
			// two clocks may differ, the wait they give does not.
			res.NextVisible = time.Now().Add(next.Sub(now))
		}
	}
	return res, rows.Err()
}

func (d *driver) Delete(ctx context.Context, q *sqlmailbox.QueueRecord, _ time.Time, refs []sqlmailbox.Ref, archive bool) ([]bool, error) {
	ids, counts := make([]int64, len(refs)), make([]int32, len(refs))
	for i, r := range refs {
		ids[i], counts[i] = r.ID, int32(r.ReceiveCount)
	}
	rows, err := d.pool.Query(ctx, qDelete, q.ID, ids, counts, q.Spec.FIFO, archive, q.Spec.Name)
	if err != nil {
		return nil, d.classify(err)
	}
	gone := map[sqlmailbox.Ref]bool{}
	var ref sqlmailbox.Ref
	_, err = pgx.ForEachRow(rows, []any{&ref.ID, &ref.ReceiveCount}, func() error {
		gone[ref] = true
		return nil
	})
	if err != nil {
		return nil, d.classify(err)
	}
	deleted := make([]bool, len(refs))
	for i, r := range refs {
		deleted[i] = gone[r]
		delete(gone, r) // a handle given twice deletes once
	}
	return deleted, nil
}

func (d *driver) ChangeVisibility(ctx context.Context, q *sqlmailbox.QueueRecord, _ time.Time, changes []sqlmailbox.Change) ([]sqlmailbox.ChangeOutcome, error) {
	n := len(changes)
	ids, counts, secs := make([]int64, n), make([]int32, n), make([]int32, n)
	nack := false
	for i, c := range changes {
		ids[i], counts[i], secs[i] = c.ID, int32(c.ReceiveCount), seconds(c.Timeout)
		nack = nack || c.Timeout == 0
	}
	rows, err := d.pool.Query(ctx, qChange, q.ID, ids, counts, secs, seconds(sqsloop.MaxVisibilityTimeout))
	if err != nil {
		return nil, d.classify(err)
	}
	out := make([]sqlmailbox.ChangeOutcome, 0, n)
	var changed, inFlight bool
	revealed := false
	_, err = pgx.ForEachRow(rows, []any{&changed, &inFlight}, func() error {
		o := sqlmailbox.Stale
		switch {
		case changed:
			o = sqlmailbox.Changed
			revealed = revealed || secs[len(out)] == 0
		case inFlight:
			o = sqlmailbox.PastCeiling
		}
		out = append(out, o)
		return nil
	})
	if err != nil {
		return nil, d.classify(err)
	}
	if len(out) != n {
		return nil, errors.New("postgres: ChangeVisibility: the server answered for a different number of entries")
	}
	if revealed {
		if _, err := d.pool.Exec(ctx, qNotify, q.ID); err != nil {
			return nil, d.classify(err)
		}
	}
	return out, nil
}

func (d *driver) RecordFailure(ctx context.Context, q *sqlmailbox.QueueRecord, _ time.Time, ref sqlmailbox.Ref, rec sqlmailbox.AuditRecord) error {
	_, err := d.pool.Exec(ctx, qRecordFailure, q.ID, ref.ID, ref.ReceiveCount, rec.Queue, rec.MessageID, rec.ReceiveCount, rec.Kind, rec.Reason)
	return d.classify(err)
}
