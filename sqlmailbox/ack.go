package sqlmailbox

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Delete acks 1–10 messages by receipt handle (DeleteMessageBatch) in one
// transaction and returns one error per handle, in order, nil for a
// successful entry. With Config.Archive the deleted messages are copied to
// the archive table in the same transaction.
//
// As in SQS and memmailbox: the newest receipt handle of a message deletes
// it, on a standard queue even after its lease lapsed, as long as no
// receive has produced a newer one; an older handle of a standard-queue
// message (superseded by a newer receive, or of a message already deleted
// or moved to the DLQ) succeeds and deletes nothing. A FIFO queue's handle
// expires with its lease: once the message is visible again, or received
// again, a delete with it fails its entry with an error wrapping
// sqsloop.ErrReceiptHandleExpired. Entries that name one message apply in
// order: the first deletes it, a second finds it gone (a success that
// deletes nothing on a standard queue, an expired handle on a FIFO queue).
// A FIFO delete frees its message group: the group's next message reaches
// the queue's waiting long polls at once (in other processes too, on
// PostgreSQL).
//
// Deletes of one Mailbox that come while another's is on the wire wait for
// it and then go together, in one statement of up to 100 handles, each
// with its own results; a handle named by two of them deletes once, for
// the first.
//
// Entry errors: a handle this queue never issued (made up, altered, or of
// another queue: its signature does not hold) wraps
// sqsloop.ErrReceiptHandleExpired (SQS: ReceiptHandleIsInvalid); an empty
// handle fails with sqsloop.ValidateDelete's error. The call as a whole
// fails with ValidateDelete's error (no handle, more than 10),
// sqsloop.ErrQueueNotFound, sqsloop.ErrMailboxClosed, ctx's error, or the
// database's (then nothing is known to be deleted: retry). Safe for
// concurrent use; it keeps no reference to receiptHandles.
func (m *Mailbox) Delete(ctx context.Context, receiptHandles []string) ([]error, error) {
	const op = "delete from"
	if err := m.check(op); err != nil {
		return nil, err
	}
	errs, err := sqsloop.ValidateDelete(receiptHandles)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	refs, at := m.refs("Delete", receiptHandles, errs)
	if len(refs) == 0 {
		return errs, nil
	}
	now := time.Now()
	m.renewReceiver(ctx, now, false)
	deleted, err := m.deletes.do(ctx, refs, len(refs), func(ctx context.Context, ins [][]driver.Ref) ([][]bool, error) {
		all := refs
		if len(ins) > 1 {
			all = slices.Concat(ins...)
		}
		deleted, err := m.s.d.Delete(ctx, &m.q, now, all, m.s.cfg.Archive)
		if err != nil {
			return nil, err
		}
		outs := make([][]bool, len(ins))
		for i, in := range ins {
			outs[i], deleted = deleted[:len(in):len(in)], deleted[len(in):]
		}
		return outs, nil
	})
	if err != nil {
		return nil, m.fail(ctx, op, err)
	}
	missed := false
	acked := make([]int, 0, len(deleted))
	for j, ok := range deleted {
		if ok {
			acked = append(acked, refs[j].ReceiveCount)
			continue
		}
		missed = true
		if m.q.Spec.FIFO {
			errs[at[j]] = fmt.Errorf("sqlmailbox: Delete entry %d: FIFO receipt handle expired: its lease ended, a newer receive superseded it, or its message is gone: %w",
				at[j], sqsloop.ErrReceiptHandleExpired)
		}
	}
	m.s.acks.acked(m.q.ID, now, acked)
	if m.q.Spec.FIFO && len(acked) > 0 {
		m.s.hub.wake(m.q.ID, len(acked)) // the next message of each group may be receivable
	}
	if missed {
		if err := m.exists(ctx, op); err != nil {
			return nil, err
		}
	}
	return errs, nil
}

// ChangeVisibility sets the visibility timeout of 1–10 in-flight messages,
// counted from now (ChangeMessageVisibilityBatch), in one transaction, and
// returns one error per entry, in order, nil on success. Timeout 0 nacks:
// the message is visible at once; more extends, or shortens, the lease.
// Timeouts are rounded up to whole seconds. A nack, or a lease shortened,
// reaches the queue's waiting long polls at once (in other processes too,
// on PostgreSQL). Entries that name one message apply in order, each to
// the message as the entries before it left it, each with its own result,
// as SQS reports them: a nack followed by an extend of the same handle
// leaves the message visible, and the extend's entry fails (the message is
// no longer in flight).
//
// Entry errors: an empty handle or a Timeout outside 0–12 h fails with
// sqsloop.ValidateChangeVisibility's error (wrapping
// sqsloop.ErrInvalidArgument); a handle this queue never issued, one
// superseded by a newer receive, of a deleted message, or of a message no
// longer in flight wraps sqsloop.ErrReceiptHandleExpired, on either queue
// type; a deadline past 12 h after the receive that produced the handle
// wraps sqsloop.ErrLeaseCeiling and changes nothing.
//
// The call as a whole fails as Delete's does. Safe for concurrent use; it
// keeps no reference to changes.
func (m *Mailbox) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	const op = "change visibility in"
	if err := m.check(op); err != nil {
		return nil, err
	}
	errs, err := sqsloop.ValidateChangeVisibility(changes)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	handles := make([]string, len(changes))
	for i, c := range changes {
		handles[i] = c.ReceiptHandle
	}
	refs, at := m.refs("ChangeVisibility", handles, errs)
	if len(refs) == 0 {
		return errs, nil
	}
	cs := make([]driver.Change, len(refs))
	for j, ref := range refs {
		cs[j] = driver.Change{Ref: ref, Timeout: sqsloop.WholeSeconds(changes[at[j]].Timeout)}
	}
	now := time.Now()
	m.renewReceiver(ctx, now, false)
	outcomes, sooner, err := m.s.d.ChangeVisibility(ctx, &m.q, now, cs)
	if err != nil {
		return nil, m.fail(ctx, op, err)
	}
	missed, changed := false, 0
	for j, o := range outcomes {
		i := at[j]
		switch o {
		case driver.Changed:
			changed++
			if t := cs[j].Timeout; t > 0 {
				m.s.looks.sooner(m.q.ID, now.Add(t))
			}
		case driver.Stale:
			missed = true
			errs[i] = fmt.Errorf("sqlmailbox: ChangeVisibility entry %d: receipt handle superseded by a newer receive, its message deleted, or no longer in flight: %w",
				i, sqsloop.ErrReceiptHandleExpired)
		case driver.PastCeiling:
			errs[i] = fmt.Errorf("sqlmailbox: ChangeVisibility entry %d: a timeout of %v reaches past the 12h ceiling after the receive: %w",
				i, cs[j].Timeout, sqsloop.ErrLeaseCeiling)
		}
	}
	if missed {
		if err := m.exists(ctx, op); err != nil {
			return nil, err
		}
	}
	if sooner {
		m.s.hub.wake(m.q.ID, changed)
	}
	return errs, nil
}

// refs decodes the handles whose entries passed the request rules (errs[i]
// nil), setting the entry error of each this queue never issued, and
// returns their refs and the entries they came from.
func (m *Mailbox) refs(call string, handles []string, errs []error) (refs []driver.Ref, at []int) {
	for i, h := range handles {
		if errs[i] != nil {
			continue
		}
		ref, ok := m.handles.decode(h)
		if !ok {
			errs[i] = fmt.Errorf("sqlmailbox: %s entry %d: receipt handle not issued by queue %q: %w",
				call, i, m.q.Spec.Name, sqsloop.ErrReceiptHandleExpired)
			continue
		}
		refs, at = append(refs, ref), append(at, i)
	}
	return refs, at
}

// exists fails with sqsloop.ErrQueueNotFound when the queue was deleted: an
// entry that found no message may have found no queue.
func (m *Mailbox) exists(ctx context.Context, op string) error {
	ok, err := m.s.d.Exists(ctx, &m.q)
	switch {
	case err != nil:
		return m.fail(ctx, op, err)
	case !ok:
		return m.notFound(op)
	}
	return nil
}
