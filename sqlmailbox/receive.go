package sqlmailbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Receive takes up to req.MaxMessages (1–10) visible messages, atomically,
// so that concurrent receivers never take one message (PostgreSQL: on a
// standard queue one statement, SELECT … FOR UPDATE SKIP LOCKED, and one
// more when some went to the dead-letter queue, so receivers never wait on
// each other; on a FIFO queue the
// receives take turns on a lock of the queue's row, for the length of
// their transaction, so that two never take messages of one group; SQLite:
// one write transaction, receives and every other write taking turns on
// the file's lock), each now in flight for req.VisibilityTimeout (0–12 h,
// rounded up to whole seconds, as SQS counts) with a fresh receipt handle.
// A message is visible once its visibility deadline has passed: never
// received, its delay ended, nacked, or its lease lapsed. Recovery needs no
// sweeper: the receive itself takes a message whose lease lapsed. It takes
// the visible messages with the earliest deadlines first, then in the
// order sent; on a queue with priorities (QueueSpec.Priority) those of the
// highest priority first.
//
// When nothing is visible it long-polls up to req.WaitTime (0–20 s, rounded
// up), and never answers empty while a message is visible: it returns as
// soon as a message of the queue is made receivable through this Store
// (sent, nacked or its lease shortened, its FIFO group freed by a delete,
// moved there as a dead letter), announced by PostgreSQL (LISTEN/NOTIFY,
// from any process), or due (a lease or delay ending, as the database last
// said); otherwise it looks at the database again every
// Config.PollInterval, which is how it sees messages sent by other
// processes on SQLite. A change wakes as many waiting long polls as its
// messages need, the oldest first; one woken whose look finds the messages
// taken by another receive waits on. It waits in its caller's goroutine,
// on one timer. Receives of one Mailbox with one visibility timeout that
// look at the database while another's look is on the wire wait for it
// and then look together, in one statement (up to 100 messages), each
// taking its share in the order they came (not on a FIFO queue, whose
// message groups a share could split): a consumer's 32 receive loops cost
// a statement per hundred messages, not per ten, when they come at once.
//
// A message already received the redrive policy's maxReceiveCount times is
// moved to the dead-letter queue instead of being delivered (keeping its
// ID and receive count), and the audit table records it; it takes no place
// in the batch: the receive goes on to the next visible message. On a FIFO queue a message group
// with a message in flight delivers nothing, and a receive takes as many
// messages of one group as it can, in order, before it takes another
// group (SQS's FIFO delivery logic: the oldest group first), so that it
// holds as few groups as it can; it looks at the oldest 1,000 messages of
// the groups not in flight (see the package doc).
//
// Each message carries the message attributes req.MessageAttributeNames
// selects (as SQS: nil, "All" or ".*" all, empty none, "prefix.*" a
// prefix), and the system attributes ApproximateReceiveCount,
// SentTimestamp, ApproximateFirstReceiveTimestamp, MessageGroupId when sent
// with one, and MessageDeduplicationId and SequenceNumber on a FIFO queue.
// Message.ReceivedAt is the receiver's clock just before the call that took
// it, so it is no later than the database's start of the lease, and earlier
// by at most that call's duration.
//
// Errors: req.Validate's, unchanged (wrapping sqsloop.ErrInvalidArgument);
// sqsloop.ErrQueueNotFound when the queue was deleted;
// sqsloop.ErrMailboxClosed (also at once to a waiting Receive when m or its
// Store is closed); ctx's error when ctx is done first, with no message
// taken if it ended while the long poll waited (on PostgreSQL, a ctx that
// ends while the receive's statement runs may come too late to stop it:
// the messages it took stay in flight, unseen, until their visibility
// timeout ends and are then delivered again, as with SQS: hidden a while,
// never lost); else the database's, transient (a database that is down or
// restarting): the consumer retries. Safe for concurrent use.
func (m *Mailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	return m.ReceiveSkipping(ctx, req, nil)
}

// ReceiveSkipping is Receive, but on a standard queue it takes no message
// whose message group is one of skip (sqsloop.GroupSkipper: a consumer's
// groups at their limit), and its long poll waits as if they were not
// there; on a FIFO queue it is Receive. The receive's query reads past
// those groups' visible messages in the order of delivery (the index has
// no group), so a skipped group's backlog costs each receive a scan of
// it, not a receive and a visibility change of each message. A receive
// that skips looks at the database alone, not together with the Mailbox's
// other receives (their shares would skip different groups). Errors:
// Receive's, and sqsloop.ValidateSkip's for skip. Safe for concurrent use.
func (m *Mailbox) ReceiveSkipping(ctx context.Context, req sqsloop.ReceiveRequest, skip []string) ([]*sqsloop.Message, error) {
	const op = "receive from"
	if err := m.check(op); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := sqsloop.ValidateSkip(skip); err != nil {
		return nil, err
	}
	if m.q.Spec.FIFO {
		skip = nil
	}
	req.VisibilityTimeout = sqsloop.WholeSeconds(req.VisibilityTimeout)
	req.WaitTime = sqsloop.WholeSeconds(req.WaitTime)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(req.WaitTime)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	w := m.s.hub.join(m.q.ID, req.MaxMessages)
	defer m.s.hub.leave(w)
	busy := false
	for {
		m.s.hub.look(w)
		start := time.Now()
		last := !start.Before(deadline)
		from, next := m.s.looks.plan(m.q.ID, start, last, busy)
		m.renewReceiver(ctx, start, true)
		looked := time.Now()
		res, answered, err := m.take(ctx, driver.ReceiveArgs{Now: start, Max: req.MaxMessages, Visibility: req.VisibilityTimeout,
			Receiver: m.receiver.id, DeadLetterReason: m.deadLetter, From: from, Next: next, SkipGroups: skip})
		if err != nil {
			m.s.looks.failed(m.q.ID)
			if errors.Is(err, sqsloop.ErrQueueNotFound) {
				return nil, m.notFound(op)
			}
			return nil, m.fail(ctx, op, err)
		}
		if from.IsZero() {
			m.s.looks.lookedWhole(m.q.ID, time.Since(looked)) // the look alone, not the registry's write before it
		}
		m.s.looks.took(m.q.ID, res.From)
		if res.DeadLettered > 0 {
			m.s.hub.wake(m.q.DeadLetterQueueID, res.DeadLettered)
		}
		if len(res.Rows) > 0 {
			m.s.looks.sooner(m.q.ID, start.Add(req.VisibilityTimeout))
			return m.messages(res.Rows, start, req)
		}
		if res.DeadLettered > 0 {
			// It moved what it found to the DLQ: look again at once, past
			// them, even at the end of the wait (long polling never
			// answers empty while a message is visible).
			continue
		}
		if next && answered {
			m.s.looks.learned(m.q.ID, res.NextVisible)
		}
		busy = res.Busy
		now := time.Now()
		if !now.Before(deadline) {
			if !last {
				continue // the last look, a whole one
			}
			return nil, nil
		}
		m.s.startListening()
		wait := min(deadline.Sub(now), m.s.cfg.PollInterval)
		if res.Busy {
			wait = min(wait, busyWait)
		}
		if m.s.hub.oldest(w) {
			wait = min(wait, max(m.s.looks.fullDue(m.q.ID).Sub(now), time.Millisecond))
		}
		if next := m.s.looks.nextVisible(m.q.ID); next.After(start) && next.Sub(now) < wait {
			wait = max(next.Sub(now), 0) // a deadline before start, the look saw passed
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		m.s.hub.wait(w)
		select {
		case <-w.ch:
		case <-timer.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.done:
			return nil, m.check(op)
		case <-m.s.done:
			return nil, m.check(op)
		}
	}
}

// take runs a receive's look at the database, together with the looks of
// m's other receives of the same visibility timeout that come while one is
// on the wire (see together): one statement takes what they all ask for,
// and each gets its share, in the order they came (but on a FIFO queue,
// where a share could split a message group between two receivers, and
// for a receive that skips groups, each look is its own). answered reports that res.Busy and res.NextVisible
// are the look's own: its statement took nothing and moved nothing.
func (m *Mailbox) take(ctx context.Context, args driver.ReceiveArgs) (res driver.ReceiveResult, answered bool, err error) {
	if m.q.Spec.FIFO || len(args.SkipGroups) > 0 {
		res, err = m.s.d.Receive(ctx, &m.q, args)
		return res, len(res.Rows) == 0 && res.DeadLettered == 0, err
	}
	out, err := m.takes(args.Visibility).do(ctx, args, args.Max, func(ctx context.Context, ins []driver.ReceiveArgs) ([]taken, error) {
		all := ins[0]
		for _, in := range ins[1:] {
			all.Max += in.Max
			all.Next = all.Next || in.Next
			if in.From.Before(all.From) {
				all.From = in.From // the earliest place any of them looks from
			}
		}
		res, err := m.s.d.Receive(ctx, &m.q, all)
		if err != nil {
			return nil, err
		}
		outs := make([]taken, len(ins))
		rows := res.Rows
		for i, in := range ins {
			k := min(in.Max, len(rows))
			outs[i].res = driver.ReceiveResult{Rows: rows[:k:k], From: res.From}
			rows = rows[k:]
			if len(res.Rows) == 0 && res.DeadLettered == 0 {
				outs[i].res.Busy, outs[i].res.NextVisible, outs[i].answered = res.Busy, res.NextVisible, true
			}
		}
		outs[0].res.DeadLettered = res.DeadLettered
		return outs, nil
	})
	return out.res, out.answered, err
}

// taken is one receive's share of a look take ran.
type taken struct {
	res      driver.ReceiveResult
	answered bool
}

// takes returns the together of m's looks with visibility timeout vis.
func (m *Mailbox) takes(vis time.Duration) *together[driver.ReceiveArgs, taken] {
	m.looking.mu.Lock()
	defer m.looking.mu.Unlock()
	if m.looking.byVisibility == nil {
		m.looking.byVisibility = make(map[time.Duration]*together[driver.ReceiveArgs, taken])
	}
	t := m.looking.byVisibility[vis]
	if t == nil {
		t = new(together[driver.ReceiveArgs, taken])
		m.looking.byVisibility[vis] = t
	}
	return t
}

// messages turns received rows into messages, receivedAt being the
// receiver's clock before the call that took them.
func (m *Mailbox) messages(rows []driver.ReceivedRow, receivedAt time.Time, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	out := make([]*sqsloop.Message, len(rows))
	buf := make([]sqsloop.Message, len(rows))
	fifo := m.q.Spec.FIFO
	for i, r := range rows {
		attrs, err := decodeAttrs(r.Attributes, req.MessageAttributeNames)
		if err != nil {
			return nil, fmt.Errorf("sqlmailbox: receive from queue %q: message %s: %w", m.q.Spec.Name, r.MessageID, err)
		}
		buf[i] = sqsloop.Message{
			ID:                r.MessageID,
			Body:              r.Body,
			MessageAttributes: attrs,
			ReceiveCount:      r.ReceiveCount,
			SentAt:            r.SentAt,
			FirstReceivedAt:   r.FirstReceivedAt,
			MessageGroupID:    r.GroupID,
			ReceiptHandle:     m.handles.encode(driver.Ref{ID: r.ID, ReceiveCount: r.ReceiveCount}),
			ReceivedAt:        receivedAt,
			VisibilityTimeout: req.VisibilityTimeout,
		}
		var seq string
		if fifo {
			seq = sequenceNumber(r.ID)
		}
		buf[i].SetSystemAttributes(r.DedupID, seq)
		out[i] = &buf[i]
	}
	return out, nil
}
