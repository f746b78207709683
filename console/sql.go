package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// sqlBackend is a database mailbox's queues, through its Store: browsed
// without receiving (no receive count goes up), moved and deleted in
// transactions of up to sqlBatch messages.
type sqlBackend struct {
	st    *sqlmailbox.Store
	since time.Time // the acked counts run from here
}

// sqlBatch is the most messages one transaction of an action moves or
// deletes; with a rate, a tenth of a second's worth (at least 1).
const sqlBatch = 100

// pathScan is how many messages one page of a browse with a JSON path
// reads at most looking for its matches (the database cannot match a JSON
// path itself): a page may come back short, with a cursor to read on.
const pathScan = 5000

func (b *sqlBackend) where() string { return "database" }

func (b *sqlBackend) queues(ctx context.Context) ([]queueInfo, error) {
	sum, err := b.st.QueueSummaries(ctx)
	if err != nil {
		return nil, err
	}
	depth := map[string]int{}
	for _, s := range sum {
		a := s.Attributes
		depth[s.Name] = a.ApproximateMessages + a.ApproximateMessagesInFlight + a.ApproximateMessagesDelayed
	}
	out := make([]queueInfo, len(sum))
	for i, s := range sum {
		a := s.Attributes
		q := queueInfo{Name: s.Name, FIFO: a.FIFO, Visible: a.ApproximateMessages, InFlight: a.ApproximateMessagesInFlight,
			Delayed: a.ApproximateMessagesDelayed, DLQ: a.DeadLetterQueue, MaxReceiveCount: a.MaxReceiveCount,
			Oldest: s.OldestSentAt, GroupsInFlight: s.GroupsInFlight, DLQDepth: -1, Acked: -1}
		if q.DLQ != "" {
			if d, ok := depth[q.DLQ]; ok {
				q.DLQDepth = d
			}
		}
		for _, o := range sum {
			if o.Attributes.DeadLetterQueue == s.Name {
				q.Sources = append(q.Sources, o.Name)
			}
		}
		if ls, err := b.st.LeaseStats(ctx, s.Name, b.since); err == nil {
			q.Acked = 0
			for _, t := range ls.Acked {
				q.Acked += t.Messages
			}
		} else if !errors.Is(err, sqsloop.ErrQueueNotFound) {
			return nil, err
		}
		out[i] = q
	}
	return out, nil
}

// stored returns the record of a stored message.
func stored(m *sqlmailbox.StoredMessage) *record {
	sys := map[string]string{
		sqsloop.AttrApproximateReceiveCount: strconv.Itoa(m.ReceiveCount),
		sqsloop.AttrSentTimestamp:           strconv.FormatInt(m.SentAt.UnixMilli(), 10),
		"Seq":                               strconv.FormatInt(m.Seq, 10),
		"VisibleAt":                         m.VisibleAt.UTC().Format(time.RFC3339Nano),
	}
	if !m.FirstReceivedAt.IsZero() {
		sys[sqsloop.AttrApproximateFirstReceiveTimestamp] = strconv.FormatInt(m.FirstReceivedAt.UnixMilli(), 10)
	}
	if m.MessageGroupID != "" {
		sys[sqsloop.AttrMessageGroupID] = m.MessageGroupID
	}
	if m.DeduplicationID != "" {
		sys[sqsloop.AttrMessageDeduplicationID] = m.DeduplicationID
	}
	if m.Priority != 0 {
		sys["Priority"] = strconv.Itoa(m.Priority)
	}
	return &record{Key: strconv.FormatInt(m.Seq, 10), ID: m.ID, Body: m.Body, Attributes: m.MessageAttributes, System: sys,
		ReceiveCount: m.ReceiveCount, SentAt: m.SentAt, FirstReceivedAt: m.FirstReceivedAt, GroupID: m.MessageGroupID,
		State: m.State}
}

// each calls fn with the matching messages of queue, a batch at a time
// (up to limit read per call of the database: a batch may hold fewer, the
// database matching all but a JSON path, matched here), in key order,
// until fn returns false or an error, or the queue has no more.
func (b *sqlBackend) each(ctx context.Context, queue string, f filter, limit int, fn func(batch []*sqlmailbox.StoredMessage) (bool, error)) error {
	mf, path := f.database()
	var after int64
	for {
		msgs, err := b.st.Browse(ctx, queue, mf, after, limit)
		if err != nil || len(msgs) == 0 {
			return err
		}
		after = msgs[len(msgs)-1].Seq
		batch := make([]*sqlmailbox.StoredMessage, 0, len(msgs))
		for i := range msgs {
			if !path || f.matchPath(msgs[i].Body) {
				batch = append(batch, &msgs[i])
			}
		}
		if more, err := fn(batch); err != nil || !more || len(msgs) < limit {
			return err
		}
	}
}

func (b *sqlBackend) browse(ctx context.Context, q *queueInfo, f filter, cursor string, limit int) (page, error) {
	after, _ := strconv.ParseInt(cursor, 10, 64)
	mf, path := f.database()
	limit = min(limit, sqlmailbox.MaxBrowse-1)
	n := limit + 1 // one more: is there a next page?
	if path {
		n = sqlmailbox.MaxBrowse
	}
	var p page
	for read := 0; ; {
		msgs, err := b.st.Browse(ctx, q.Name, mf, after, n)
		if err != nil {
			return p, err
		}
		for i := range msgs {
			m := &msgs[i]
			if path && !f.matchPath(m.Body) {
				after = m.Seq
				continue
			}
			if len(p.Records) == limit {
				p.Next = p.Records[limit-1].Key
				return p, nil
			}
			p.Records = append(p.Records, stored(m))
			after = m.Seq
		}
		if len(msgs) < n {
			return p, nil
		}
		if read += len(msgs); read >= pathScan {
			p.Next = strconv.FormatInt(after, 10) // read on from here
			return p, nil
		}
	}
}

func (b *sqlBackend) count(ctx context.Context, q *queueInfo, f filter) (count, error) {
	mf, path := f.database()
	if !path {
		n, err := b.st.CountMessages(ctx, q.Name, mf)
		return count{N: n, Exact: true, Of: q.depth()}, err
	}
	n := 0
	err := b.each(ctx, q.Name, f, sqlmailbox.MaxBrowse, func(batch []*sqlmailbox.StoredMessage) (bool, error) {
		n += len(batch)
		return true, nil
	})
	return count{N: n, Exact: true, Of: q.depth()}, err
}

func (b *sqlBackend) message(ctx context.Context, q *queueInfo, key string) (*record, []historyEntry, error) {
	seq, err := strconv.ParseInt(key, 10, 64)
	if err != nil || seq < 1 {
		return nil, nil, nil
	}
	msgs, err := b.st.Browse(ctx, q.Name, sqlmailbox.MessageFilter{}, seq-1, 1)
	if err != nil || len(msgs) == 0 || msgs[0].Seq != seq {
		return nil, nil, err
	}
	rec := stored(&msgs[0])
	audit, err := b.st.MessageHistory(ctx, rec.ID, 100)
	if err != nil {
		return rec, nil, err
	}
	h := make([]historyEntry, len(audit))
	for i, a := range audit {
		h[i] = historyEntry{At: a.At, Queue: a.Queue, Kind: string(a.Kind), ReceiveCount: a.ReceiveCount, Reason: a.Reason}
	}
	return rec, h, nil
}

// act moves, deletes or exports the messages of j's selection that were
// sent before it started, in key order, a transaction per batch: an
// interrupted action has moved whole batches, and its count says how
// many; nothing is lost or copied.
func (b *sqlBackend) act(ctx context.Context, j *job, w io.Writer) error {
	f := j.Filter
	if f.SentBefore.IsZero() || f.SentBefore.After(j.Started) {
		f.SentBefore = j.Started // not the messages it moved that failed again since
	}
	batch := sqlBatch
	if j.Rate > 0 {
		batch = min(max(j.Rate/10, 1), sqlBatch)
	}
	reason := fmt.Sprintf("console action %d by %s", j.ID, j.Who)
	var enc *json.Encoder
	switch j.Kind {
	case actRedrive:
		j.setMethod("database transactions of up to " + strconv.Itoa(batch) + " messages")
		reason = fmt.Sprintf("redriven to %s by console action %d (%s)", j.To, j.ID, j.Who)
	case actDelete:
		j.setMethod("database transactions of up to " + strconv.Itoa(batch) + " messages")
	case actExport:
		enc = newExportEncoder(w)
		batch = sqlmailbox.MaxBrowse
	}
	pace := &pacer{rate: j.Rate}
	return b.each(ctx, j.Queue, f, batch, func(msgs []*sqlmailbox.StoredMessage) (bool, error) {
		if len(msgs) == 0 {
			return true, nil
		}
		if j.Kind == actExport {
			for _, m := range msgs {
				if err := writeExport(enc, stored(m)); err != nil {
					return false, err
				}
			}
			j.progress(len(msgs), 0)
			return true, ctx.Err()
		}
		if err := pace.wait(ctx, len(msgs)); err != nil {
			return false, err
		}
		seqs := make([]int64, len(msgs))
		for i, m := range msgs {
			seqs[i] = m.Seq
		}
		var done []int64
		var err error
		if j.Kind == actRedrive {
			done, err = b.st.MoveMessages(ctx, j.Queue, j.To, seqs, reason)
		} else {
			done, err = b.st.DeleteMessages(ctx, j.Queue, seqs, reason)
		}
		if err != nil {
			return false, err
		}
		j.progress(len(done), len(seqs)-len(done))
		return true, nil
	})
}

func (b *sqlBackend) leases(ctx context.Context, queues []queueInfo) (*dbLeases, error) {
	rs, err := b.st.Receivers(ctx)
	if err != nil {
		return nil, err
	}
	l := &dbLeases{Receivers: rs}
	for _, q := range queues {
		in, err := b.st.InFlight(ctx, q.Name, 200)
		if errors.Is(err, sqsloop.ErrQueueNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, m := range in {
			l.InFlight = append(l.InFlight, queueLease{Queue: q.Name, InFlightMessage: m})
		}
	}
	return l, nil
}

// dbLeases is what a database knows of the messages in flight: their
// holders and leases, and the receiver registry.
type dbLeases struct {
	Receivers []sqlmailbox.Receiver
	InFlight  []queueLease
}

// queueLease is one message in flight, with its queue.
type queueLease struct {
	Queue string
	sqlmailbox.InFlightMessage
}
