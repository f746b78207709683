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
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Queries with the pick of each queue type in place.
var (
	qReceiveStandard = strings.Replace(qReceive, "$pick", qPickStandard, 1)
	qReceiveFIFO     = strings.Replace(qReceive, "$pick", qPickFIFO, 1)
)

func (d *pgDriver) Send(ctx context.Context, q *driver.QueueRecord, _ time.Time, msgs []driver.NewMessage) ([]driver.SendOutcome, error) {
	out := make([]driver.SendOutcome, len(msgs))
	carry := d.notes.lead(q.ID)
	var err error
	if q.Spec.FIFO {
		err = d.sendFIFO(ctx, q, msgs, out, carry)
	} else {
		err = d.sendStandard(ctx, q, msgs, out, carry)
	}
	if err != nil {
		return nil, err
	}
	if !carry {
		d.notes.follow(q.ID)
	}
	return out, nil
}

// sendStandard stores a standard queue's batch in one statement.
func (d *pgDriver) sendStandard(ctx context.Context, q *driver.QueueRecord, msgs []driver.NewMessage, out []driver.SendOutcome, carry bool) error {
	n := len(msgs)
	ids, bodies, groups := make([]string, n), make([]string, n), make([]string, n)
	attrs, delays := make([][]byte, n), make([]int32, n)
	for i, m := range msgs {
		ids[i], bodies[i], attrs[i], groups[i], delays[i] = m.MessageID, m.Body, m.Attributes, m.GroupID, seconds(m.Delay)
		out[i].MessageID = m.MessageID
	}
	var stored int64
	var notified any
	return d.classify(d.pool.QueryRow(ctx, qSend, q.ID, ids, bodies, attrs, groups, delays, carry).Scan(&stored, &notified))
}

// sendFIFO stores a FIFO batch in one transaction, message by message, in
// order, each deduplicated against the window (and the batch).
func (d *pgDriver) sendFIFO(ctx context.Context, q *driver.QueueRecord, msgs []driver.NewMessage, out []driver.SendOutcome, carry bool) error {
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
			out[i] = driver.SendOutcome{MessageID: *id, Duplicate: !stored, Seq: seq}
		}
		if !carry {
			return nil
		}
		_, err := tx.Exec(ctx, qNotify, q.ID)
		return err
	})
}

func (d *pgDriver) Receive(ctx context.Context, q *driver.QueueRecord, r driver.ReceiveArgs) (driver.ReceiveResult, error) {
	args := []any{q.ID, r.Max, seconds(r.Visibility), q.Spec.MaxReceiveCount, q.DeadLetterQueueID, r.Receiver, q.Spec.Name,
		r.DeadLetterReason, string(sqlmailbox.AuditDeadLettered), !q.Spec.FIFO}
	var res driver.ReceiveResult
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
		err = d.classify(d.notes.notify(ctx, q.DeadLetterQueueID))
	}
	return res, err
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// receive runs a receive query of q and reads its rows: first the one about
// the receive (see qReceive), then those taken.
func receive(ctx context.Context, db querier, q *driver.QueueRecord, query string, args []any) (driver.ReceiveResult, error) {
	var res driver.ReceiveResult
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return res, err
	}
	defer rows.Close()
	for first := true; rows.Next(); first = false {
		var row driver.ReceivedRow
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

func (d *pgDriver) Delete(ctx context.Context, q *driver.QueueRecord, _ time.Time, refs []driver.Ref, archive bool) ([]bool, error) {
	ids, counts := make([]int64, len(refs)), make([]int32, len(refs))
	for i, r := range refs {
		ids[i], counts[i] = r.ID, int32(r.ReceiveCount)
	}
	carry := q.Spec.FIFO && d.notes.lead(q.ID) // a FIFO delete may free its group
	rows, err := d.pool.Query(ctx, qDelete, q.ID, ids, counts, q.Spec.FIFO, archive, q.Spec.Name, carry)
	if err != nil {
		return nil, d.classify(err)
	}
	gone := map[driver.Ref]bool{}
	var ref driver.Ref
	var notified any
	_, err = pgx.ForEachRow(rows, []any{&ref.ID, &ref.ReceiveCount, &notified}, func() error {
		gone[ref] = true
		return nil
	})
	if err != nil {
		return nil, d.classify(err)
	}
	if q.Spec.FIFO && !carry && len(gone) > 0 {
		d.notes.follow(q.ID)
	}
	deleted := make([]bool, len(refs))
	for i, r := range refs {
		deleted[i] = gone[r]
		delete(gone, r) // a handle given twice deletes once: the first entry did
	}
	return deleted, nil
}

func (d *pgDriver) ChangeVisibility(ctx context.Context, q *driver.QueueRecord, _ time.Time, changes []driver.Change) ([]driver.ChangeOutcome, bool, error) {
	n := len(changes)
	ids, counts, secs := make([]int64, n), make([]int32, n), make([]int32, n)
	nack := false
	for i, c := range changes {
		ids[i], counts[i], secs[i] = c.ID, int32(c.ReceiveCount), seconds(c.Timeout)
		nack = nack || c.Timeout == 0
	}
	// Extensions, the common batch, make nothing sooner: only a batch with
	// a nack takes the notifier's turn; a shortened lease follows.
	carry := nack && d.notes.lead(q.ID)
	rows, err := d.pool.Query(ctx, qChange, q.ID, ids, counts, secs, seconds(sqsloop.MaxVisibilityTimeout), carry)
	if err != nil {
		return nil, false, d.classify(err)
	}
	out := make([]driver.ChangeOutcome, 0, n)
	var outcome int32
	var sooner bool
	var notified any
	_, err = pgx.ForEachRow(rows, []any{&outcome, &sooner, &notified}, func() error {
		out = append(out, driver.ChangeOutcome(outcome))
		return nil
	})
	if err != nil {
		return nil, false, d.classify(err)
	}
	if len(out) != n {
		return nil, false, errors.New("postgres: ChangeVisibility: the server answered for a different number of entries")
	}
	if sooner && !carry {
		d.notes.follow(q.ID)
	}
	return out, sooner, nil
}

func (d *pgDriver) RecordFailure(ctx context.Context, q *driver.QueueRecord, _ time.Time, ref driver.Ref, rec driver.AuditRow) error {
	_, err := d.pool.Exec(ctx, qRecordFailure, q.ID, ref.ID, ref.ReceiveCount, rec.Queue, rec.MessageID, rec.ReceiveCount, rec.Kind, rec.Reason)
	return d.classify(err)
}
