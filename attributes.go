package sqsloop

import (
	"context"
	"time"
)

// QueueAttributes are the queue settings that bear on a consumer's
// configuration, as GetQueueAttributes reports them.
type QueueAttributes struct {
	// VisibilityTimeout is the queue's default visibility timeout, 0–12 h.
	VisibilityTimeout time.Duration
	// Delay is the queue's default delivery delay (DelaySeconds), 0–15 min.
	Delay time.Duration
	// MaxReceiveCount is the redrive policy's maxReceiveCount: after this many
	// receives SQS moves a message to DeadLetterQueue. 0 means no redrive
	// policy (messages are redelivered until they expire).
	MaxReceiveCount int
	// DeadLetterQueue names the dead-letter queue (its ARN on SQS, its name in
	// memmailbox); empty without a redrive policy.
	DeadLetterQueue string
	// FIFO reports a FIFO queue: one in-flight message per message group,
	// order kept within a group.
	FIFO bool
}

// AttributesReader is implemented by a Mailbox that can report its queue's
// attributes. The consumer uses it, when present, to check its configuration
// against the queue at start-up. Errors are as for Mailbox methods.
type AttributesReader interface {
	QueueAttributes(ctx context.Context) (QueueAttributes, error)
}
