package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

// poisonSendTimeout bounds DeadLetters.Copy: 10 s.
const poisonSendTimeout = 10 * time.Second

// DeadLetters sends the copies of one queue's poison messages to that
// queue's dead-letter queue, exactly as a Consumer does for a handler that
// fails with Permanent (see Permanent for the copy). It is what a runtime
// that runs Handlers outside a Consumer (package sqslambda, on AWS Lambda)
// uses, so that a poison message's copy is the same in every runtime. Safe
// for concurrent use.
type DeadLetters struct {
	src visibility.Mailbox

	mu  sync.Mutex
	dlq sqsloop.Mailbox
	err error // a lasting reason there is none
}

// NewDeadLetters returns the DeadLetters of the queue src is a client of
// (the Mailbox the messages were received from). src can name its
// dead-letter queue when it implements sqsloop.DeadLetterQueueOpener, as
// memmailbox, sqsmailbox and sqlmailbox do. It makes no call: the
// dead-letter queue is opened at the first Copy and then kept open for the
// life of the DeadLetters.
func NewDeadLetters(src visibility.Mailbox) *DeadLetters {
	return &DeadLetters{src: src}
}

// Copy sends m's copy, failed with cause, to the dead-letter queue (its
// body and message attributes, with AttrPoisonReason from cause's text,
// AttrPoisonMessageID and AttrPoisonReceiveCount; on a FIFO queue its
// message group and deduplication ID) and returns nil once the
// dead-letter queue has it. It does not delete m: the caller deletes it
// after Copy returned nil, never before, so that a crash between the two
// leaves m in both queues, never in neither.
//
// It blocks until the copy is sent, ctx ends, or 10 s have passed. The
// error wraps sqsloop.ErrNoDeadLetterQueue, naming the queue (or, when src
// is no sqsloop.DeadLetterQueueOpener, its type), when there is no
// dead-letter queue to send to; that is remembered, and later calls return
// it without a call. Otherwise it is the error of OpenDeadLetterQueue
// (sqsloop.ErrAccessDenied, sqsloop.ErrQueueNotFound, a transient
// failure: tried again at the next Copy) or of the dead-letter queue's
// Send, the call's or its entry's.
func (d *DeadLetters) Copy(ctx context.Context, m *sqsloop.Message, cause error) error {
	ctx, cancel := context.WithTimeout(ctx, poisonSendTimeout)
	defer cancel()
	dlq, err := d.open(ctx)
	if err != nil {
		return err
	}
	res, err := dlq.Send(ctx, []sqsloop.OutgoingMessage{poisonCopy(m, cause)})
	if err != nil {
		return err
	}
	return res[0].Err
}

// open returns the dead-letter queue, or why there is none. A lasting
// reason (no redrive policy, a source that cannot name its DLQ) is
// remembered; a transient failure is tried again next time.
func (d *DeadLetters) open(ctx context.Context) (sqsloop.Mailbox, error) {
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

// close closes the dead-letter queue, if open (a Consumer's, when Run
// returns).
func (d *DeadLetters) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dlq != nil {
		_ = d.dlq.Close()
		d.dlq = nil
	}
}
