package sqlmailbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Send stores 1–10 messages (SendMessageBatch) in one transaction and
// returns one result per message, in order: its message ID (a random UUID,
// as SQS's) and, on a FIFO queue, its sequence number (the one a receive
// reports in its SequenceNumber attribute), or the entry's error. A message is visible at once, or after
// its Delay (0–15 min, rounded up to whole seconds; 0 means the queue's
// delay). Once Send returns, the messages it reports sent are committed:
// they survive the process's death (see the package doc for what a power
// loss may cost on SQLite). It wakes the queue's long polls in this process
// at once, and on PostgreSQL those of every process (NOTIFY).
//
// The rules are memmailbox's and SQS's, with their errors unchanged:
// sqsloop.ValidateSend's, then sqsloop.QueueSpec.AcceptMessage's (the
// queue's MaxMessageSize; on a FIFO queue a MessageGroupID on every
// message, no per-message Delay, and a DeduplicationID unless the queue has
// ContentBasedDeduplication, the body's SHA-256 then); a send
// whose deduplication ID was sent within DeduplicationWindow (5 min)
// succeeds with the first message's ID and sequence number and stores
// nothing; a standard queue takes a MessageGroupID (fair queues: it orders
// nothing) but no DeduplicationID; on a queue with priorities
// sqsloop.QueueSpec.MessagePriority's (the sqsloop.PriorityAttribute
// message attribute: a Number, -9 to 9). Entry errors wrap
// sqsloop.ErrInvalidArgument.
//
// The call as a whole fails with ValidateSend's error (an empty batch, more
// than 10 entries, more than 1 MiB in all), sqsloop.ErrQueueNotFound,
// sqsloop.ErrMailboxClosed, ctx's error, or the database's (then nothing
// was stored). Safe for concurrent use; it keeps no reference to msgs.
func (m *Mailbox) Send(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	if err := m.check("send to"); err != nil {
		return nil, err
	}
	invalid, err := sqsloop.ValidateSend(msgs)
	if err != nil {
		return nil, err
	}
	return m.send(ctx, msgs, invalid)
}

// SendBulk stores 1–1,000 messages (sqsloop.MaxBulkSize), at most 16 MiB
// together (sqsloop.MaxBulkBytes), in one transaction, as Send stores 10:
// on PostgreSQL one statement for a standard queue (a FIFO queue's four:
// see Send), where Send's batches of 10 would each be a statement and a
// commit. It implements sqsloop.BulkSender; package producer uses it when
// more than one batch is ready. Its rules, results and errors are Send's,
// with sqsloop.ValidateSendBulk's limits and texts instead of
// sqsloop.ValidateSend's. Safe for concurrent use; it keeps no reference
// to msgs.
func (m *Mailbox) SendBulk(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	if err := m.check("send to"); err != nil {
		return nil, err
	}
	invalid, err := sqsloop.ValidateSendBulk(msgs)
	if err != nil {
		return nil, err
	}
	return m.send(ctx, msgs, invalid)
}

// send stores the messages of msgs that passed the request rules (invalid[i]
// nil) and the queue's own, in one transaction, and returns their results.
func (m *Mailbox) send(ctx context.Context, msgs []sqsloop.OutgoingMessage, invalid []error) ([]sqsloop.SendResult, error) {
	const op = "send to"
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	results := make([]sqsloop.SendResult, len(msgs))
	rows := make([]driver.NewMessage, 0, len(msgs))
	at := make([]int, 0, len(msgs))
	for i, msg := range msgs {
		if invalid[i] != nil {
			results[i].Err = invalid[i]
			continue
		}
		row, err := m.prepare(i, msg)
		if err != nil {
			results[i].Err = err
			continue
		}
		rows, at = append(rows, row), append(at, i)
	}
	if len(rows) == 0 {
		return results, nil
	}
	now := time.Now()
	out, err := m.s.d.Send(ctx, &m.q, now, rows)
	if err != nil {
		return nil, m.fail(ctx, op, err)
	}
	for j, o := range out {
		results[at[j]].MessageID = o.MessageID
		if m.q.Spec.FIFO {
			results[at[j]].SequenceNumber = sequenceNumber(o.Seq)
		}
	}
	for _, r := range rows {
		if r.Delay > 0 {
			m.s.looks.sooner(m.q.ID, now.Add(r.Delay))
		}
	}
	m.s.hub.wake(m.q.ID, len(rows))
	return results, nil
}

// prepare applies the queue's own rules to msgs[i], which passed
// sqsloop.ValidateSend (sqsloop.QueueSpec.AcceptMessage and, with
// priorities, MessagePriority: their errors unchanged), and returns its
// row.
func (m *Mailbox) prepare(i int, msg sqsloop.OutgoingMessage) (driver.NewMessage, error) {
	delay, dedupID, err := m.q.Spec.AcceptMessage(i, msg)
	if err != nil {
		return driver.NewMessage{}, err
	}
	prio, err := m.q.Spec.MessagePriority(i, msg)
	if err != nil {
		return driver.NewMessage{}, err
	}
	attrs, err := encodeAttrs(msg.MessageAttributes)
	if err != nil {
		return driver.NewMessage{}, fmt.Errorf("%w: Send: msgs[%d].MessageAttributes: %v", sqsloop.ErrInvalidArgument, i, err)
	}
	return driver.NewMessage{MessageID: newMessageID(), Body: msg.Body, Attributes: attrs, GroupID: msg.MessageGroupID, DedupID: dedupID,
		Delay: delay, Priority: prio}, nil
}

// sequenceNumber renders a FIFO message's row key as its SequenceNumber:
// 20 decimal digits, zero-padded, so that the strings sort as the numbers
// (SQS's are 20-digit numbers too).
func sequenceNumber(id int64) string { return fmt.Sprintf("%020d", id) }

// newMessageID returns a random UUID (version 4), the form of SQS message
// IDs.
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand.Read crashes the program instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
