package memmailbox

import "time"

// Stats is a snapshot of one queue: three gauges (messages now visible, in
// flight, delayed) and cumulative counters since the queue was created.
//
// Once no call is running, every message is accounted for:
//
//	Sent + DeadLetteredIn == Visible + InFlight + Delayed + Deleted + DeadLettered
//
// Duplicates and StaleDeletes are outside it: they count calls that
// succeeded without adding or removing a message. Every successful Delete
// entry is in Deleted or StaleDeletes, never both.
type Stats struct {
	// Visible is the number of messages a receive could return now, but for
	// FIFO message groups blocked by a message in flight (SQS:
	// ApproximateNumberOfMessages).
	Visible int
	// InFlight is the number of received messages whose visibility timeout
	// has not ended (ApproximateNumberOfMessagesNotVisible).
	InFlight int
	// Delayed is the number of messages whose delivery delay has not ended
	// (ApproximateNumberOfMessagesDelayed).
	Delayed int

	// Sent counts messages enqueued by Send (duplicates excluded).
	Sent int
	// Duplicates counts FIFO sends accepted but dropped by deduplication.
	Duplicates int
	// Received counts deliveries: each message each time a receive returns it.
	Received int
	// Deleted counts messages deleted (acked).
	Deleted int
	// StaleDeletes counts Delete entries on a standard queue that succeeded
	// and deleted nothing: the receipt handle was one this queue issued, but
	// it no longer holds its message (a newer receive superseded it, or the
	// message was deleted or moved to the DLQ). SQS answers such a delete
	// with success ("If you use an old ReceiptHandle, the request will
	// succeed, but the message might not be deleted": the SDK's
	// DeleteMessage doc). An ack counted here is not a deletion: a message
	// still in the queue stays there, to be deleted by its newest receipt
	// handle or delivered again.
	StaleDeletes int
	// ExpiredFound counts in-flight messages the recovery sweep found past
	// their visibility deadline: leases that lapsed, and nacks with a
	// back-off that ended.
	ExpiredFound int
	// Returned counts messages that went from in flight back to visible: the
	// ExpiredFound ones, plus nacks with visibility timeout 0.
	Returned int
	// DeadLettered counts messages moved out of this queue to its DLQ by the
	// redrive policy.
	DeadLettered int
	// DeadLetteredIn counts messages moved into this queue as the DLQ of
	// another queue.
	DeadLetteredIn int
}

// Stats returns a snapshot of the queue, after sweeping what is due (so an
// expired lease counts as visible again). It works on a closed handle or
// queue too, to check after shutdown that nothing was lost, and returns the
// zero Stats for a queue that does not exist. Safe for concurrent use.
func (q *Queue) Stats() Stats {
	s := q.s
	if s == nil {
		return Stats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	return s.snapshot()
}
