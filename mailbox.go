package sqsloop

import (
	"context"
	"time"
)

// ReceiveRequest describes one ReceiveMessage call. Its Validate method holds
// SQS's rules for it, which every Mailbox checks.
type ReceiveRequest struct {
	// MaxMessages is how many messages to return at most, 1–10
	// (MaxBatchSize; SQS: MaxNumberOfMessages).
	MaxMessages int

	// VisibilityTimeout hides each returned message for this long, 0–12 h.
	// SQS counts it in whole seconds; every Mailbox rounds it up
	// (WholeSeconds).
	VisibilityTimeout time.Duration

	// WaitTime is the long poll: Receive returns as soon as a message is
	// visible, or empty after WaitTime. 0–20 s (MaxWaitTime), rounded up to
	// whole seconds (WholeSeconds); 0 returns at once.
	WaitTime time.Duration

	// MessageAttributeNames chooses the user-defined message attributes
	// returned (SQS MessageAttributeNames): nil means all of them; an
	// empty, non-nil slice none (less to transfer and decode); otherwise
	// those named, as in SQS: a name ending in ".*" matches every attribute
	// with that prefix ("order.*"), and "All" or ".*" matches them all.
	// Names are case-sensitive and not empty (Validate). The system
	// attributes returned are always those named by the Attr… constants
	// (see Message.Attributes).
	MessageAttributeNames []string
}

// VisibilityChange is one entry of a ChangeVisibility batch.
type VisibilityChange struct {
	// ReceiptHandle of the receive whose lease changes.
	ReceiptHandle string
	// Timeout is the new visibility timeout counted from now, 0–12 h,
	// rounded up to whole seconds (WholeSeconds): 0 makes the message
	// visible at once (a nack), more keeps it hidden (an extend).
	Timeout time.Duration
}

// OutgoingMessage is one entry of a Send batch.
type OutgoingMessage struct {
	// Body is the message body; SQS accepts 1 byte to 1 MiB of text, body
	// and message attributes together (MaxMessageSize).
	Body string
	// MessageAttributes are user-defined attributes, at most
	// MaxMessageAttributes (10); ValidateSend lists the rules of their
	// names, data types and values.
	MessageAttributes map[string]MessageAttribute
	// Delay postpones the first delivery, 0–15 min (MaxDelay), rounded up
	// to whole seconds (WholeSeconds); 0 means the queue's default delay
	// (DelaySeconds). FIFO queues accept only the queue-level delay.
	Delay time.Duration
	// MessageGroupID is required on a FIFO queue (order and one message in
	// flight per group); a standard queue accepts it too (fair queues), for
	// no ordering.
	MessageGroupID string
	// DeduplicationID deduplicates sends on a FIFO queue within 5 minutes;
	// empty means content-based deduplication (when the queue enables it).
	DeduplicationID string
}

// Size returns how many bytes m counts toward MaxMessageSize, as SQS counts
// them: the body plus, for every message attribute, its name, data type and
// value. A queue may set a lower cap (QueueAttributes.MaxMessageSize).
func (m OutgoingMessage) Size() int {
	size := len(m.Body)
	for name, a := range m.MessageAttributes {
		size += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return size
}

// SendResult is the outcome of one entry of a Send batch.
type SendResult struct {
	// MessageID is the ID the queue assigned, set when Err is nil. A FIFO
	// send dropped by deduplication reports the first message's ID.
	MessageID string
	// SequenceNumber is the FIFO sequence number the queue assigned (SQS
	// SequenceNumber: digits, increasing within a message group), set when
	// Err is nil on a FIFO queue; empty on a standard queue, and from a
	// Mailbox that does not report it.
	SequenceNumber string
	// Err is this entry's failure, nil on success.
	Err error
}

// Mailbox is one queue, shaped like the SQS API: every method is one call, and
// batch methods take 1–10 entries (MaxBatchSize) and report one result per
// entry, in the order given. An implementation retries nothing, starts no
// goroutine that outlives a call, and keeps no reference to the slices it is
// given. All methods are safe for concurrent use.
//
// Errors: a method returns a non-nil error (its second result) when the call
// as a whole failed (no or too many entries, a closed mailbox, a missing
// queue, the transport), in which case no entry is known to have been
// applied; otherwise each entry's error is in the per-entry result (nil on
// success). An entry that is invalid on its own (an empty receipt handle, a
// duration out of range) fails alone, with an error wrapping
// ErrInvalidArgument; the other entries of its batch are applied.
// The rules every queue applies are this package's (ReceiveRequest.Validate,
// ValidateDelete, ValidateChangeVisibility, ValidateSend): an implementation
// checks them before anything else and returns their errors unchanged, so
// every Mailbox rejects the same requests with the same text, and rounds
// every duration up to whole seconds (WholeSeconds), as SQS counts them.
// Errors wrap the package's sentinels: ErrReceiptHandleExpired,
// ErrLeaseCeiling, ErrQueueNotFound, ErrMailboxClosed, ErrInvalidArgument,
// ErrAccessDenied (permanent, unless an IAM change is still propagating);
// anything else is transient (network, throttling) and may be retried by
// the caller.
type Mailbox interface {
	// Receive returns up to req.MaxMessages messages, each hidden for
	// req.VisibilityTimeout and carrying a fresh receipt handle. It blocks up
	// to req.WaitTime (long polling) when no message is visible, and returns
	// early when ctx is done (with ctx's error and no message taken). An
	// empty result with a nil error means the wait ended with nothing to
	// receive.
	Receive(ctx context.Context, req ReceiveRequest) ([]*Message, error)

	// Delete acks: it deletes the messages behind 1–10 receipt handles
	// (DeleteMessageBatch). As in SQS, an old handle of a standard-queue
	// message (superseded by a newer receive, or of a message already
	// deleted) succeeds and deletes nothing, and the newest handle of a
	// message whose lease lapsed still deletes it while nobody has received
	// it again; so a successful entry proves the message gone only if its
	// lease held. A handle the queue never issued, or an expired one on a
	// FIFO queue, fails its entry with ErrReceiptHandleExpired.
	Delete(ctx context.Context, receiptHandles []string) ([]error, error)

	// ChangeVisibility sets the visibility timeout of 1–10 in-flight
	// messages, counted from now (ChangeMessageVisibilityBatch): 0 nacks,
	// more extends. A stale handle fails its entry with
	// ErrReceiptHandleExpired; a timeout reaching past 12 h after the receive
	// fails it with ErrLeaseCeiling.
	ChangeVisibility(ctx context.Context, changes []VisibilityChange) ([]error, error)

	// Send enqueues 1–10 messages (SendMessageBatch).
	Send(ctx context.Context, msgs []OutgoingMessage) ([]SendResult, error)

	// Close releases the mailbox. Receives waiting in a long poll return
	// ErrMailboxClosed; every later call returns ErrMailboxClosed. Close is
	// idempotent. It does not delete the queue or its messages.
	Close() error
}

// BulkSender is implemented by a Mailbox that can store many messages in
// one call: one statement and one commit on a database (sqlmailbox), where
// Send's batches of 10 would each pay a commit. Package producer sends
// through it when more than one batch of messages is ready; SQS has no such
// call, so sqsmailbox and memmailbox do not implement it.
//
// It is an optional interface of the root, beside AttributesReader and
// DeadLetterQueueOpener, rather than producer's: it is a capability of a
// Mailbox, whose request rule (ValidateSendBulk) every implementation
// checks with the same text, and a mailbox package implements it without
// importing the producer.
type BulkSender interface {
	// SendBulk enqueues 1–MaxBulkSize (1,000) messages, at most
	// MaxBulkBytes (16 MiB) together, atomically: when it returns a nil
	// error every valid entry is stored (and its result says so), when it
	// fails none is. Everything else is Send's: the rules each message
	// must pass (ValidateSendBulk, then the queue's own), one result per
	// message in order, entry errors, and the errors of the call as a
	// whole. Safe for concurrent use; it keeps no reference to msgs.
	SendBulk(ctx context.Context, msgs []OutgoingMessage) ([]SendResult, error)
}
