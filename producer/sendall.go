package producer

import (
	"context"
	"fmt"

	"github.com/sqsloop/sqsloop"
)

// SendAll sends msgs, batched, and waits for every outcome: the way to send
// many messages from one goroutine. Each message is accepted as by
// Enqueue (waiting for room when more are pending than the Config allows,
// while the first ones go), so they fill SendMessageBatch calls of 10 and
// up to Config.MaxCalls calls go at once: 500 messages are 50 calls, where
// Send in a loop makes 500, one round trip each.
//
// It returns one Result per message, in msgs' order, and nil when every
// message was sent; else a *BatchError whose Errs[i] is message i's error
// (Send's errors: the request rules', the queue's refusal, the last
// transient failure, ctx's, ErrClosed, ErrGroupPaused), and Results[i] is
// zero for a message not sent. A message that fails does not stop the
// others: an invalid one is refused alone, and ctx's end withdraws those
// not yet on the wire. On a FIFO queue the messages of one message group go
// in msgs' order. Safe for concurrent use.
func (p *Producer) SendAll(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]Result, error) {
	return p.sendAll(ctx, msgs, make([]error, len(msgs)))
}

// sendAll sends the messages of msgs whose errs entry is nil and waits for
// their outcomes, which it writes into errs and the results.
func (p *Producer) sendAll(ctx context.Context, msgs []sqsloop.OutgoingMessage, errs []error) ([]Result, error) {
	pds := make([]*Pending, len(msgs))
	for i, m := range msgs {
		if errs[i] == nil {
			pds[i], errs[i] = p.Enqueue(ctx, m)
		}
	}
	res := make([]Result, len(msgs))
	for i, pd := range pds {
		if pd != nil {
			<-pd.it.done // ctx's end settles it: see Enqueue
			res[i], errs[i] = pd.it.res, pd.it.err
		}
	}
	return res, newBatchError(errs)
}

// BatchError is SendAll's error when some messages were not sent. Errs has
// one entry per message, in order: nil for a message sent, else its error.
// Unwrap returns the errors, so errors.Is and errors.As reach each of them
// (errors.Is(err, sqsloop.ErrInvalidArgument) reports whether any was
// refused as invalid).
type BatchError struct {
	Errs   []error
	Failed int // how many entries of Errs are not nil
}

// newBatchError returns the BatchError of errs, or nil when none failed.
func newBatchError(errs []error) error {
	n := 0
	for _, err := range errs {
		if err != nil {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return &BatchError{Errs: errs, Failed: n}
}

// Error counts the messages not sent and gives the first one's error.
func (e *BatchError) Error() string {
	for i, err := range e.Errs {
		if err != nil {
			return fmt.Sprintf("producer: %d of %d messages not sent (the first, message %d: %v)", e.Failed, len(e.Errs), i, err)
		}
	}
	return fmt.Sprintf("producer: %d of %d messages not sent", e.Failed, len(e.Errs))
}

// Unwrap returns the errors of the messages not sent, in order.
func (e *BatchError) Unwrap() []error {
	out := make([]error, 0, e.Failed)
	for _, err := range e.Errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}
