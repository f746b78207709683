package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Kinds of receive, by the queue's type: each its own pick.
const (
	receiveStandard = iota
	receivePriority
	receiveFIFO
)

// receiveTemplates[kind][dlq][skip] is the window of the kind of queue
// (qWindowStandard, qWindowFIFO) with its pick (passing over the groups of
// its last parameter with skip 1: standard picks only) and the take
// (takeLive, or with a dead-letter queue, dlq 1, takeOrDeadLetter) in
// place, its limit ({max}) still to be put in: receiveQuery does, so that
// each statement is planned once per connection and size (see
// qPickStandard).
var receiveTemplates = func() (qs [3][2][2]string) {
	for kind, pick := range []string{qPickStandard, qPickPriority, qPickFIFO} {
		window := qWindowStandard
		if kind == receiveFIFO {
			window = qWindowFIFO
		}
		for dlq, take := range []string{strings.Replace(takeLive, "{live}", "", 1),
			strings.Replace(takeOrDeadLetter, "{live}", "p.receive_count < $8 AND ", 1)} {
			for skip, sg := range []string{"", strings.Replace(skipGroups, "{n}", [2]string{"$8", "$13"}[dlq], 1)} {
				q := strings.NewReplacer("{pick}", strings.Replace(pick, "{skip}", sg, 1), "{take}", take).Replace(window)
				qs[kind][dlq][skip] = strings.NewReplacer("{live}", [2]string{"true", "receive_count < $8"}[dlq], "{locktimeout}", locktimeout,
					"{now}", "coalesce($5::timestamptz, statement_timestamp())").Replace(q)
			}
		}
	}
	return qs
}()

// receiveQueries holds the receive statements made, by kind, dlq, skip
// and max.
var receiveQueries sync.Map // [4]int{kind, dlq, skip, max} → string

// receiveQuery returns the receive statement of the kind of queue, with or
// without a dead-letter queue, passing over some groups or not, for max
// messages (1–100).
func receiveQuery(kind, dlq, skip, max int) string {
	key := [4]int{kind, dlq, skip, max}
	if q, ok := receiveQueries.Load(key); ok {
		return q.(string)
	}
	q := strings.ReplaceAll(receiveTemplates[kind][dlq][skip], "{max}", strconv.Itoa(max))
	receiveQueries.Store(key, q)
	return q
}

// maxLockTimeouts bounds how many times in a row a receive's window is run
// again after it gave up a lock (see receiveLockTimeout): a moment's wait
// for an ack, rarely met; past it the receive fails, transient.
const maxLockTimeouts = 3

// levels are the priorities qNext and qCounts look at: 0 alone on a queue without
// priorities, else every priority.
var levels = [2][]int16{{0}, func() (ps []int16) {
	for p := sqsloop.MaxPriority; p >= sqsloop.MinPriority; p-- {
		ps = append(ps, int16(p))
	}
	return ps
}()}

// levelsOf returns the priority levels of q's messages.
func levelsOf(q *driver.QueueRecord) []int16 {
	if q.Spec.Priority {
		return levels[1]
	}
	return levels[0]
}

func (d *pgDriver) Send(ctx context.Context, q *driver.QueueRecord, _ time.Time, msgs []driver.NewMessage) ([]driver.SendOutcome, error) {
	out := make([]driver.SendOutcome, len(msgs))
	carry := d.notes.lead(q.ID, len(msgs))
	var err error
	if q.Spec.FIFO {
		err = d.sendFIFO(ctx, q, msgs, out, carry)
	} else {
		err = d.sendStandard(ctx, q, msgs, out, carry)
	}
	if err != nil {
		return nil, err
	}
	if carry == nil {
		d.notes.follow(q.ID, len(msgs))
	}
	return out, nil
}

// sendStandard stores a standard queue's batch in one statement.
func (d *pgDriver) sendStandard(ctx context.Context, q *driver.QueueRecord, msgs []driver.NewMessage, out []driver.SendOutcome, carry *string) error {
	n := len(msgs)
	ids, bodies, groups := make([]string, n), make([]string, n), make([]string, n)
	attrs, delays, prios := make([][]byte, n), make([]int32, n), make([]int16, n)
	for i, m := range msgs {
		ids[i], bodies[i], attrs[i], groups[i], delays[i], prios[i] = m.MessageID, m.Body, m.Attributes, m.GroupID, seconds(m.Delay), int16(m.Priority)
		out[i].MessageID = m.MessageID
	}
	var stored int64
	var notified any
	return d.classify(d.pool.QueryRow(ctx, qSend, q.ID, ids, bodies, attrs, groups, delays, carry, prios).Scan(&stored, &notified))
}

// sendFIFO stores a FIFO batch in one transaction, in order, each message
// deduplicated against the window (and the batch: the first message of an
// ID is stored, the others are its duplicates), in four statements
// whatever the batch's size (see qClaimDedup).
func (d *pgDriver) sendFIFO(ctx context.Context, q *driver.QueueRecord, msgs []driver.NewMessage, out []driver.SendOutcome, carry *string) error {
	first := make(map[string]int, len(msgs)) // deduplication ID -> its first message
	var dedups, firstIDs []string
	for i, m := range msgs {
		if _, ok := first[m.DedupID]; !ok {
			first[m.DedupID] = i
			dedups, firstIDs = append(dedups, m.DedupID), append(firstIDs, m.MessageID)
		}
	}
	return d.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, qClaimDedup, q.ID, dedups, firstIDs, seconds(sqlmailbox.DeduplicationWindow))
		if err != nil {
			return err
		}
		claimed := make(map[string]bool, len(dedups))
		var dedup string
		if _, err := pgx.ForEachRow(rows, []any{&dedup}, func() error {
			claimed[dedup] = true
			return nil
		}); err != nil {
			return err
		}
		var mids, bodies, groups, ids []string
		var attrs [][]byte
		var delays []int32
		var prios []int16
		for i, m := range msgs {
			if claimed[m.DedupID] && first[m.DedupID] == i {
				mids, bodies, groups, ids = append(mids, m.MessageID), append(bodies, m.Body), append(groups, m.GroupID), append(ids, m.DedupID)
				attrs, delays, prios = append(attrs, m.Attributes), append(delays, seconds(m.Delay)), append(prios, int16(m.Priority))
			}
		}
		held := make(map[string]driver.SendOutcome, len(dedups)) // by deduplication ID: the message that holds it
		if len(mids) > 0 {
			rows, err := tx.Query(ctx, qStoreFIFO, q.ID, mids, bodies, attrs, groups, ids, delays, prios)
			if err != nil {
				return err
			}
			var seq int64
			var seqIDs []string
			var seqs []int64
			if _, err := pgx.ForEachRow(rows, []any{&dedup, &seq}, func() error {
				held[dedup] = driver.SendOutcome{MessageID: msgs[first[dedup]].MessageID, Seq: seq}
				seqIDs, seqs = append(seqIDs, dedup), append(seqs, seq)
				return nil
			}); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, qDedupSeq, q.ID, seqIDs, seqs); err != nil {
				return err
			}
		}
		if len(held) < len(dedups) {
			var others []string
			for _, id := range dedups {
				if !claimed[id] {
					others = append(others, id)
				}
			}
			rows, err := tx.Query(ctx, qDedupFind, q.ID, others)
			if err != nil {
				return err
			}
			var o driver.SendOutcome
			if _, err := pgx.ForEachRow(rows, []any{&dedup, &o.MessageID, &o.Seq}, func() error {
				held[dedup] = o
				return nil
			}); err != nil {
				return err
			}
		}
		for i, m := range msgs {
			h, ok := held[m.DedupID]
			if !ok {
				return fmt.Errorf("deduplication ID %q of message %d neither stored nor found", m.DedupID, i)
			}
			h.Duplicate = !claimed[m.DedupID] || first[m.DedupID] != i
			out[i] = h
		}
		if carry == nil {
			return nil
		}
		_, err = tx.Exec(ctx, qNotify, *carry)
		return err
	})
}

func (d *pgDriver) Receive(ctx context.Context, q *driver.QueueRecord, r driver.ReceiveArgs) (driver.ReceiveResult, error) {
	kind, dlq := receiveStandard, 0
	switch {
	case q.Spec.FIFO:
		kind = receiveFIFO
	case q.Spec.Priority:
		kind = receivePriority
	}
	from := r.From
	if kind != receiveStandard || from.IsZero() {
		from = driver.Position{At: minTime} // the whole queue
	}
	args := []any{q.ID, seconds(r.Visibility), r.Receiver, nil, nil, from.At, from.ID}
	if q.DeadLetterQueueID != 0 {
		dlq = 1
		args = append(args, q.Spec.MaxReceiveCount, q.DeadLetterQueueID, q.Spec.Name, r.DeadLetterReason, string(sqlmailbox.AuditDeadLettered))
	}
	skipping := 0
	if len(r.SkipGroups) > 0 && !q.Spec.FIFO {
		skipping = 1
		args = append(args, r.SkipGroups)
	}
	var res driver.ReceiveResult
	skip := []int64{} // not nil: the picks compare ids with ALL of it, and ALL(NULL) is never true
	var at *time.Time // the first window's time, once it took something
	for timedOut := 0; len(res.Rows) < r.Max; {
		need := r.Max - len(res.Rows)
		args[3], args[4] = skip, at
		query := receiveQuery(kind, dlq, skipping, need)
		var w window
		var err error
		if q.Spec.FIFO {
			err = d.classify(again(ctx, func() error {
				return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, qLockFIFO, q.ID); err != nil {
						return err
					}
					w, err = takeWindow(ctx, tx, query, args)
					return err
				})
			}))
		} else {
			err = again(ctx, func() (err error) {
				w, err = takeWindow(ctx, d.pool, query, args)
				return err
			})
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "55P03" && timedOut < maxLockTimeouts {
				timedOut++ // it gave up a lock (receiveLockTimeout), taking nothing: again
				continue
			}
			err = d.classify(err)
		}
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, w.rows...)
		res.DeadLettered += w.dead
		if at == nil && len(w.rows)+w.dead > 0 {
			at = &w.at
			if kind == receiveStandard && skipping == 0 {
				res.From = w.first
			}
		}
		for _, row := range w.rows { // taken with a lease of 0 s, it is visible again: not for this receive
			skip = append(skip, row.ID)
		}
		if q.Spec.FIFO || w.dead == 0 {
			break // a FIFO pick looked past its dead already; else the batch is full, or nothing more was visible
		}
		// Some went to the DLQ: their places go to the next window.
	}
	if res.DeadLettered > 0 {
		if err := d.classify(d.notes.notify(ctx, q.DeadLetterQueueID, res.DeadLettered)); err != nil {
			return res, err
		}
	}
	if len(res.Rows) > 0 || res.DeadLettered > 0 {
		return res, nil
	}
	if err := d.classify(d.next(ctx, q, from, r.Next, &res)); err != nil {
		return res, err
	}
	if skipping == 1 {
		// The visible messages qNext saw may be the skipped groups': the
		// long poll waits for a wake-up or the next deadline.
		res.Busy = false
	}
	return res, nil
}

// minTime is before every visibility deadline: the place of a look at the
// whole queue.
var minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// window is what one window of a receive did.
type window struct {
	rows  []driver.ReceivedRow // taken, in the pick's order
	dead  int                  // moved to the DLQ
	at    time.Time            // the window's time
	first driver.Position      // the place of the first message taken or moved, in the pick's order
}

// takeWindow runs a receive window (qWindow) and reads its rows.
func takeWindow(ctx context.Context, db querier, query string, args []any) (window, error) {
	var w window
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return w, err
	}
	defer rows.Close()
	var order []int64
	firstN := int64(-1)
	for rows.Next() {
		var row driver.ReceivedRow
		var kind int16
		var n int64
		var was time.Time
		if err := rows.Scan(&kind, &n, &was, &row.ID, &row.MessageID, &row.Body, &row.Attributes, &row.GroupID, &row.DedupID,
			&row.SentAt, &row.FirstReceivedAt, &row.ReceiveCount, &w.at); err != nil {
			return w, err
		}
		switch kind {
		case 0:
			w.rows, order = append(w.rows, row), append(order, n)
		case 1:
			w.dead++
		default:
			continue
		}
		if firstN < 0 || n < firstN {
			firstN, w.first = n, driver.Position{At: was, ID: row.ID}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return w, err
	}
	sort.Sort(byPick{w.rows, order})
	return w, nil
}

// next sets res.Busy and, when asked, res.NextVisible after a receive that
// looked from from and took nothing and moved nothing, as qNext says, or
// fails with ErrQueueNotFound when the queue is gone.
func (d *pgDriver) next(ctx context.Context, q *driver.QueueRecord, from driver.Position, ask bool, res *driver.ReceiveResult) error {
	lv := levelsOf(q)
	var exists bool
	var next, now time.Time
	if err := again(ctx, func() error {
		return d.pool.QueryRow(ctx, qNext, q.ID, ask, lv, from.At, from.ID).Scan(&exists, &res.Busy, &next, &now)
	}); err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("queue %q: %w", q.Spec.Name, sqsloop.ErrQueueNotFound)
	}
	if next.After(now) {
		// The server's deadline, as a time on this process's clock: the two
		// clocks may differ, the wait they give does not.
		res.NextVisible = time.Now().Add(next.Sub(now))
	}
	return nil
}

// byPick sorts received rows by their place in the pick's order.
type byPick struct {
	rows  []driver.ReceivedRow
	order []int64
}

func (b byPick) Len() int           { return len(b.rows) }
func (b byPick) Less(i, j int) bool { return b.order[i] < b.order[j] }
func (b byPick) Swap(i, j int) {
	b.rows[i], b.rows[j] = b.rows[j], b.rows[i]
	b.order[i], b.order[j] = b.order[j], b.order[i]
}

func (d *pgDriver) Delete(ctx context.Context, q *driver.QueueRecord, _ time.Time, refs []driver.Ref, archive bool) ([]bool, error) {
	ids, counts := make([]int64, len(refs)), make([]int32, len(refs))
	for i, r := range refs {
		ids[i], counts[i] = r.ID, int32(r.ReceiveCount)
	}
	var carry *string
	if q.Spec.FIFO {
		carry = d.notes.lead(q.ID, len(refs)) // a FIFO delete may free its group
	}
	query, args := qDelete, []any{q.ID, ids, counts, q.Spec.FIFO, carry}
	if archive {
		query, args = qDeleteArchive, append(args, q.Spec.Name)
	}
	var gone map[driver.Ref]bool
	if err := again(ctx, func() error {
		rows, err := d.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		gone = map[driver.Ref]bool{}
		var ref driver.Ref
		var notified any
		_, err = pgx.ForEachRow(rows, []any{&ref.ID, &ref.ReceiveCount, &notified}, func() error {
			gone[ref] = true
			return nil
		})
		return err
	}); err != nil {
		return nil, d.classify(err)
	}
	if q.Spec.FIFO && carry == nil && len(gone) > 0 {
		d.notes.follow(q.ID, len(gone))
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
	var carry *string
	if nack {
		carry = d.notes.lead(q.ID, n)
	}
	var out []driver.ChangeOutcome
	var sooner bool
	if err := again(ctx, func() error {
		rows, err := d.pool.Query(ctx, qChange, q.ID, ids, counts, secs, seconds(sqsloop.MaxVisibilityTimeout), carry)
		if err != nil {
			return err
		}
		out = make([]driver.ChangeOutcome, 0, n)
		var outcome int32
		var notified any
		_, err = pgx.ForEachRow(rows, []any{&outcome, &sooner, &notified}, func() error {
			out = append(out, driver.ChangeOutcome(outcome))
			return nil
		})
		return err
	}); err != nil {
		return nil, false, d.classify(err)
	}
	if len(out) != n {
		return nil, false, errors.New("postgres: ChangeVisibility: the server answered for a different number of entries")
	}
	if sooner && carry == nil {
		d.notes.follow(q.ID, n)
	}
	return out, sooner, nil
}

func (d *pgDriver) RecordFailure(ctx context.Context, q *driver.QueueRecord, _ time.Time, ref driver.Ref, rec driver.AuditRow) error {
	_, err := d.pool.Exec(ctx, qRecordFailure, q.ID, ref.ID, ref.ReceiveCount, rec.Queue, rec.MessageID, rec.ReceiveCount, rec.Kind, rec.Reason)
	return d.classify(err)
}
