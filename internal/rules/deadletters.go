package rules

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sqsloop/sqsloop"
)

// poisonSendTimeout bounds DeadLetters.Copy: 10 s.
const poisonSendTimeout = 10 * time.Second

// DeadLetters sends the copies of one queue's poison messages (handlers
// that failed with sqsloop.Permanent) to that queue's dead-letter queue,
// for the consumer and sqslambda alike. Safe for concurrent use.
type DeadLetters struct {
	src any // what the messages were received from

	mu  sync.Mutex
	dlq sqsloop.Mailbox
	err error // a lasting reason there is none
}

// NewDeadLetters returns the DeadLetters of the queue src is a client of
// (the Mailbox, or sqslambda's Queue, the messages were received from). src
// can name its dead-letter queue when it implements
// sqsloop.DeadLetterQueueOpener. It makes no call: the dead-letter queue is
// opened at the first Copy and then kept open until Close.
func NewDeadLetters(src any) *DeadLetters {
	return &DeadLetters{src: src}
}

// Copy sends m's copy, failed with cause, to the dead-letter queue (its
// body and message attributes, with sqsloop.AttrPoisonReason from cause's text,
// sqsloop.AttrPoisonMessageID and sqsloop.AttrPoisonReceiveCount; on a FIFO queue its
// message group and deduplication ID) and returns nil once the
// dead-letter queue has it. It does not delete m: the caller deletes it
// (or reports it processed) after Copy returned nil, never before, so that
// a crash between the two leaves m in both queues, never in neither.
//
// It blocks until the copy is sent, ctx ends, or 10 s have passed. The
// error wraps sqsloop.ErrNoDeadLetterQueue, naming the queue (or, when src
// is no sqsloop.DeadLetterQueueOpener, its type), when there is no
// dead-letter queue to send to; that is remembered, and later calls return
// it without a call. Otherwise it is the error of OpenDeadLetterQueue (a
// transient failure is tried again at the next Copy) or of the dead-letter
// queue's Send, the call's or its entry's.
func (d *DeadLetters) Copy(ctx context.Context, m *sqsloop.Message, cause error) error {
	ctx, cancel := context.WithTimeout(ctx, poisonSendTimeout)
	defer cancel()
	dlq, err := d.Open(ctx)
	if err != nil {
		return err
	}
	res, err := dlq.Send(ctx, []sqsloop.OutgoingMessage{poisonCopy(m, cause)})
	if err != nil {
		return err
	}
	return res[0].Err
}

// Open returns the dead-letter queue, opened at the first call and kept
// open until Close (the consumer also reads its counts), or why there is
// none. A lasting reason (no redrive policy, a source that cannot name its
// DLQ) is remembered; a transient failure is tried again next time.
func (d *DeadLetters) Open(ctx context.Context) (sqsloop.Mailbox, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dlq != nil || d.err != nil {
		return d.dlq, d.err
	}
	o, ok := d.src.(sqsloop.DeadLetterQueueOpener)
	if !ok {
		d.err = fmt.Errorf("the mailbox (%T) cannot name its dead-letter queue (it is no sqsloop.DeadLetterQueueOpener): %w", d.src, sqsloop.ErrNoDeadLetterQueue)
		return nil, d.err
	}
	dlq, err := o.OpenDeadLetterQueue(ctx)
	switch {
	case errors.Is(err, sqsloop.ErrNoDeadLetterQueue):
		d.err = err
	case err == nil:
		d.dlq = dlq
	}
	return dlq, err
}

// Close closes the dead-letter queue, if open (a consumer's, when Run
// returns).
func (d *DeadLetters) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dlq != nil {
		_ = d.dlq.Close()
		d.dlq = nil
	}
}

// poisonCopy is m as it goes to the dead-letter queue, failed with err.
func poisonCopy(m *sqsloop.Message, err error) sqsloop.OutgoingMessage {
	out := sqsloop.OutgoingMessage{Body: m.Body, MessageGroupID: m.MessageGroupID}
	if FIFO(m) {
		out.DeduplicationID = m.Attributes[sqsloop.AttrMessageDeduplicationID]
	}
	own := m.MessageAttributes
	if len(own)+3 > sqsloop.MaxMessageAttributes {
		out.MessageAttributes = maps.Clone(own)
		return out
	}
	with := make(map[string]sqsloop.MessageAttribute, len(own)+3)
	maps.Copy(with, own)
	with[sqsloop.AttrPoisonReason] = sqsloop.MessageAttribute{DataType: "String", StringValue: reason(err)}
	with[sqsloop.AttrPoisonMessageID] = sqsloop.MessageAttribute{DataType: "String", StringValue: m.ID}
	with[sqsloop.AttrPoisonReceiveCount] = sqsloop.MessageAttribute{DataType: "Number", StringValue: strconv.Itoa(m.ReceiveCount)}
	if m.ID == "" { // no empty String attribute in SQS
		delete(with, sqsloop.AttrPoisonMessageID)
	}
	out.MessageAttributes = with
	if out.Size() > sqsloop.MaxMessageSize { // seldom: no room left in 1 MiB
		out.MessageAttributes = maps.Clone(own)
	}
	return out
}

// reason is err's text as an attribute value: the characters SQS takes
// (others become '?'), at most sqsloop.MaxPoisonReason bytes, never empty.
func reason(err error) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r == '\t', r == '\n', r == '\r':
			return r
		case r < 0x20, r >= 0xD800 && r < 0xE000, r == 0xFFFE, r == 0xFFFF, r == utf8.RuneError:
			return '?'
		}
		return r
	}, err.Error())
	for len(s) > sqsloop.MaxPoisonReason {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	if s == "" {
		s = "?"
	}
	return s
}
