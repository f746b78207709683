package sqsloop

import (
	"context"
	"time"
)

// QueueAttributes are a queue's settings and its approximate depth, as
// GetQueueAttributes reports them.
type QueueAttributes struct {
	// VisibilityTimeout is the queue's default visibility timeout, 0–12 h.
	VisibilityTimeout time.Duration
	// Delay is the queue's default delivery delay (DelaySeconds), 0–15 min.
	Delay time.Duration
	// RetentionPeriod is how long the queue keeps a message before deleting
	// it (MessageRetentionPeriod), 1 min–14 days.
	RetentionPeriod time.Duration
	// MaxMessageSize is the largest message the queue accepts, in bytes
	// (MaximumMessageSize), 1,024–1,048,576.
	MaxMessageSize int
	// MaxReceiveCount is the redrive policy's maxReceiveCount: after this many
	// receives SQS moves a message to DeadLetterQueue. 0 means no redrive
	// policy (messages are redelivered until they expire).
	MaxReceiveCount int
	// DeadLetterQueue names the dead-letter queue (its ARN on SQS, its name in
	// memmailbox and sqlmailbox); empty without a redrive policy.
	DeadLetterQueue string
	// FIFO reports a FIFO queue: one in-flight message per message group,
	// order kept within a group.
	FIFO bool
	// ContentBasedDeduplication reports a FIFO queue that deduplicates sends
	// without a deduplication ID by the SHA-256 of their body.
	ContentBasedDeduplication bool
	// Priority reports a queue with priorities (QueueSpec.Priority; never
	// on SQS).
	Priority bool

	// ApproximateMessages is the number of messages visible, ready to be
	// received (SQS ApproximateNumberOfMessages). Like every Approximate…
	// count it is a snapshot, and on SQS an eventually consistent one
	// (about a minute behind at worst, as AWS documents).
	ApproximateMessages int
	// ApproximateMessagesInFlight is the number of messages received and
	// not yet deleted nor visible again (SQS
	// ApproximateNumberOfMessagesNotVisible).
	ApproximateMessagesInFlight int
	// ApproximateMessagesDelayed is the number of messages sent with a
	// delay that has not ended yet (SQS ApproximateNumberOfMessagesDelayed).
	ApproximateMessagesDelayed int
}

// AttributesReader is implemented by a Mailbox that can report its queue's
// attributes. The consumer uses it, when present, to check its configuration
// against the queue at start-up; the producer, to learn once whether the
// queue is FIFO (whether to keep message groups in order); sqslambda
// requires it of its Queue. Errors are as for Mailbox methods.
type AttributesReader interface {
	QueueAttributes(ctx context.Context) (QueueAttributes, error)
}

// DeadLetterQueueOpener is implemented by a Mailbox that can reach the
// dead-letter queue its queue's redrive policy names (QueueAttributes'
// DeadLetterQueue): this is how a Mailbox names its DLQ to the code above
// it, which sends a poison message's copy there itself (see package
// consumer) instead of waiting for maxReceiveCount receives.
type DeadLetterQueueOpener interface {
	// OpenDeadLetterQueue returns a Mailbox of the dead-letter queue, read
	// from the queue's redrive policy at the time of the call. The caller
	// owns it and closes it; closing it leaves this Mailbox open, and
	// closing this Mailbox may close it. It returns an error wrapping
	// ErrNoDeadLetterQueue, naming the queue (its URL or name), when the
	// queue has no redrive policy, and
	// otherwise the errors of a Mailbox method (ErrQueueNotFound,
	// ErrAccessDenied, ErrMailboxClosed, transient errors). Safe for
	// concurrent use.
	OpenDeadLetterQueue(ctx context.Context) (Mailbox, error)
}
