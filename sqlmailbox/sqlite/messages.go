package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

func (d *sqliteDriver) Send(ctx context.Context, q *driver.QueueRecord, now time.Time, msgs []driver.NewMessage) ([]driver.SendOutcome, error) {
	out := make([]driver.SendOutcome, len(msgs))
	t := micros(now)
	err := d.tx(ctx, func(tx *sql.Tx) error {
		for i, m := range msgs {
			out[i] = driver.SendOutcome{MessageID: m.MessageID}
			if q.Spec.FIFO {
				if _, err := tx.ExecContext(ctx, qDedupForget, q.ID, m.DedupID, t); err != nil {
					return err
				}
				var first string
				var seq int64
				switch err := tx.QueryRowContext(ctx, qDedupFind, q.ID, m.DedupID).Scan(&first, &seq); {
				case err == nil:
					out[i] = driver.SendOutcome{MessageID: first, Duplicate: true, Seq: seq}
					continue
				case !errors.Is(err, sql.ErrNoRows):
					return err
				}
			}
			var id int64
			if err := tx.QueryRowContext(ctx, qInsertMessage, q.ID, m.MessageID, m.Body, m.Attributes, m.GroupID, m.DedupID,
				t, micros(now.Add(m.Delay)), m.Priority).Scan(&id); err != nil {
				return err
			}
			if q.Spec.FIFO {
				out[i].Seq = id
				if _, err := tx.ExecContext(ctx, qDedupAdd, q.ID, m.DedupID, m.MessageID, id, micros(now.Add(sqlmailbox.DeduplicationWindow))); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// picked is a message Receive chose, before it is taken or moved.
type picked struct {
	id    int64
	count int
}

func (d *sqliteDriver) Receive(ctx context.Context, q *driver.QueueRecord, r driver.ReceiveArgs) (driver.ReceiveResult, error) {
	var res driver.ReceiveResult
	now := micros(r.Now)
	pickQuery, nextQuery := pickQueries[0][0], nextQueries[0]
	skip := 0
	if len(r.SkipGroups) > 0 {
		skip = 1
	}
	switch {
	case q.Spec.FIFO:
		pickQuery, skip = qPickFIFO, 0
	case q.Spec.Priority:
		pickQuery = pickQueries[1][skip]
	default:
		pickQuery = pickQueries[0][skip]
	}
	if q.Spec.Priority {
		nextQuery = nextQueries[1]
	}
	live := math.MaxInt32
	if q.DeadLetterQueueID != 0 {
		live = q.Spec.MaxReceiveCount
	}
	err := d.tx(ctx, func(tx *sql.Tx) error {
		res = driver.ReceiveResult{}
		// Pick and take until the batch is full: a message moved to the
		// DLQ takes no place in it, so a pick that moved some is followed
		// by another for the places they held.
		for len(res.Rows) < r.Max {
			need := r.Max - len(res.Rows)
			var groups []string
			if skip == 1 {
				groups = r.SkipGroups
			}
			ps, err := pick(ctx, tx, pickQuery, q.ID, now, need, live, res.Rows, groups)
			if err != nil {
				return err
			}
			take := make([]any, 4, 4+len(ps))
			take[0], take[1], take[2], take[3] = q.ID, now, micros(r.Now.Add(r.Visibility)), r.Receiver
			dead := 0
			for _, p := range ps {
				if q.DeadLetterQueueID != 0 && p.count >= q.Spec.MaxReceiveCount {
					if err := deadLetter(ctx, tx, q, now, p.id, r.DeadLetterReason); err != nil {
						return err
					}
					dead++
					continue
				}
				take = append(take, p.id)
			}
			res.DeadLettered += dead
			if len(take) > 4 {
				rows, err := takeRows(ctx, tx, take, ps)
				if err != nil {
					return err
				}
				res.Rows = append(res.Rows, rows...)
			}
			if q.Spec.FIFO || dead == 0 || len(ps) < need {
				break // a FIFO pick looked past its dead already
			}
		}
		if len(res.Rows) > 0 || res.DeadLettered > 0 {
			return nil
		}
		var exists bool
		var at int64
		if err := tx.QueryRowContext(ctx, nextQuery, q.ID, now).Scan(&exists, &at); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("queue %q: %w", q.Spec.Name, sqsloop.ErrQueueNotFound)
		}
		if at != 0 {
			res.NextVisible = fromMicros(at)
		}
		return nil
	})
	return res, err
}

// pickQueries[priority][skip] is qPickStandard (qPickPriority) passing
// over none of the message groups, or (skip 1) over ?6's.
var pickQueries = [2][2]string{
	{strings.Replace(qPickStandard, "{skip}", "", 1), strings.Replace(qPickStandard, "{skip}", skipGroups, 1)},
	{strings.Replace(qPickPriority, "{skip}", "", 1), strings.Replace(qPickPriority, "{skip}", skipGroups, 1)},
}

// pick runs the pick query of a receive for up to max messages; live is
// the receive count below which a message is delivered, not dead-lettered
// (qPickFIFO's ?4); taken are the messages the receive took already; skip,
// when not empty, the message groups it passes over (the query's ?6).
func pick(ctx context.Context, tx *sql.Tx, query string, queue, now int64, max, live int, taken []driver.ReceivedRow, skip []string) ([]picked, error) {
	ids := make([]string, len(taken))
	for i, r := range taken {
		ids[i] = strconv.FormatInt(r.ID, 10)
	}
	args := []any{queue, now, max, live, "[" + strings.Join(ids, ",") + "]"}
	if len(skip) > 0 {
		groups, err := json.Marshal(skip)
		if err != nil {
			return nil, err
		}
		args = append(args, string(groups))
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var ps []picked
	for rows.Next() {
		var p picked
		if err := rows.Scan(&p.id, &p.count); err != nil {
			rows.Close()
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, errors.Join(rows.Err(), rows.Close())
}

// allLevels lists every priority, highest first: "9, 8, …, -9".
var allLevels = func() string {
	var all []string
	for p := sqsloop.MaxPriority; p >= sqsloop.MinPriority; p-- {
		all = append(all, strconv.Itoa(p))
	}
	return strings.Join(all, ", ")
}()

// nextQueries are qNext for a queue without priorities and with them.
var nextQueries = [2]string{strings.Replace(qNext, "{levels}", "(0)", 1),
	strings.Replace(qNext, "{levels}", "("+strings.ReplaceAll(allLevels, ", ", "), (")+")", 1)}

// takeQueries[n] is qTake for n messages.
var takeQueries = func() (qs [driver.MaxReceive + 1]string) {
	for n := 1; n < len(qs); n++ {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("?%d", 5+i)
		}
		qs[n] = strings.Replace(qTake, "$ids", strings.Join(ids, ", "), 1)
	}
	return qs
}()

// takeRows takes the messages whose IDs follow qTake's four arguments in
// args, in one statement, and returns them in the order ps picked them.
func takeRows(ctx context.Context, tx *sql.Tx, args []any, ps []picked) ([]driver.ReceivedRow, error) {
	rows, err := tx.QueryContext(ctx, takeQueries[len(args)-4], args...)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]driver.ReceivedRow, len(args)-4)
	for rows.Next() {
		var row driver.ReceivedRow
		var sent, first int64
		if err := rows.Scan(&row.ID, &row.MessageID, &row.Body, &row.Attributes, &row.GroupID, &row.DedupID, &sent, &first, &row.ReceiveCount); err != nil {
			rows.Close()
			return nil, err
		}
		row.SentAt, row.FirstReceivedAt = fromMicros(sent), fromMicros(first)
		byID[row.ID] = row
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	out := make([]driver.ReceivedRow, 0, len(byID))
	for _, p := range ps {
		if row, ok := byID[p.id]; ok {
			out = append(out, row)
		}
	}
	return out, nil
}

// deadLetter moves message id of q to q's dead-letter queue, keeping its
// row, and audits it with reason (sqlmailbox.DeadLetterReason).
func deadLetter(ctx context.Context, tx *sql.Tx, q *driver.QueueRecord, now, id int64, reason string) error {
	var msgID string
	var count int
	if err := tx.QueryRowContext(ctx, qMoveToDLQ, q.ID, now, q.DeadLetterQueueID, id).Scan(&msgID, &count); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, qAudit, q.Spec.Name, msgID, count, string(sqlmailbox.AuditDeadLettered), reason, now)
	return err
}

func (d *sqliteDriver) Delete(ctx context.Context, q *driver.QueueRecord, now time.Time, refs []driver.Ref, archive bool) ([]bool, error) {
	deleted := make([]bool, len(refs))
	t := micros(now)
	err := d.tx(ctx, func(tx *sql.Tx) error {
		for i, ref := range refs {
			var msgID, body, group string
			var attrs []byte
			var count int
			var sent int64
			err := tx.QueryRowContext(ctx, qDelete, q.ID, ref.ID, ref.ReceiveCount, q.Spec.FIFO, t).Scan(&msgID, &body, &attrs, &group, &count, &sent)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				deleted[i] = false
				continue
			case err != nil:
				return err
			}
			deleted[i] = true
			if archive {
				if _, err := tx.ExecContext(ctx, qArchive, q.Spec.Name, msgID, body, attrs, group, count, sent, t); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return deleted, nil
}

func (d *sqliteDriver) ChangeVisibility(ctx context.Context, q *driver.QueueRecord, now time.Time, changes []driver.Change) ([]driver.ChangeOutcome, bool, error) {
	out := make([]driver.ChangeOutcome, len(changes))
	sooner := false
	t := micros(now)
	err := d.tx(ctx, func(tx *sql.Tx) error {
		sooner = false
		for i, c := range changes { // in order: each sees what those before it did
			out[i] = driver.Stale
			var inFlight bool
			var was int64
			switch err := tx.QueryRowContext(ctx, qLease, q.ID, c.ID, c.ReceiveCount, t).Scan(&inFlight, &was); {
			case errors.Is(err, sql.ErrNoRows):
				continue
			case err != nil:
				return err
			}
			if !inFlight {
				continue
			}
			res, err := tx.ExecContext(ctx, qChange, q.ID, t, c.ID, c.ReceiveCount, c.Timeout.Microseconds(), sqsloop.MaxVisibilityTimeout.Microseconds())
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			out[i] = driver.PastCeiling
			if n == 1 {
				out[i] = driver.Changed
				sooner = sooner || t+c.Timeout.Microseconds() < was
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, sooner, nil
}

func (d *sqliteDriver) RecordFailure(ctx context.Context, q *driver.QueueRecord, now time.Time, ref driver.Ref, rec driver.AuditRow) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, qAudit, rec.Queue, rec.MessageID, rec.ReceiveCount, rec.Kind, rec.Reason, micros(now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, qUnlease, q.ID, ref.ID, ref.ReceiveCount)
		return err
	})
}
