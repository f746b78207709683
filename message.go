package sqsloop

import (
	"strconv"
	"time"
)

// MessageAttribute is one user-defined message attribute. DataType is
// "String", "Number" or "Binary", optionally followed by a custom suffix
// ("Number.int"); String and Number use StringValue, Binary uses BinaryValue.
type MessageAttribute struct {
	DataType    string
	StringValue string
	BinaryValue []byte
}

// Names of the SQS system attributes a Mailbox returns in
// Message.Attributes, and the only ones sqsmailbox asks SQS for (asking for
// All costs transfer and decoding on every receive): those Message exposes
// as typed fields, the FIFO ones, and AWSTraceHeader (the X-Ray trace
// header, for tracing across the queue). A message carries only those that
// apply to it: MessageGroupId when it was sent with a group, the
// deduplication ID and sequence number on a FIFO queue, AWSTraceHeader when
// its sender set one (an SQS client other than a Mailbox: OutgoingMessage
// carries no system attributes, so memmailbox never has it).
const (
	AttrApproximateReceiveCount          = "ApproximateReceiveCount"
	AttrApproximateFirstReceiveTimestamp = "ApproximateFirstReceiveTimestamp"
	AttrSentTimestamp                    = "SentTimestamp"
	AttrMessageGroupID                   = "MessageGroupId"
	AttrMessageDeduplicationID           = "MessageDeduplicationId"
	AttrSequenceNumber                   = "SequenceNumber"
	AttrAWSTraceHeader                   = "AWSTraceHeader"
)

// Message is one received message together with the receipt handle of the
// receive that produced it.
//
// A Message is not safe for concurrent mutation; reading it from several
// goroutines is safe. Its receipt handle is acked, nacked and extended by
// the lease owner (package visibility), not through the Message.
type Message struct {
	// ID is the message ID SQS assigned when the message was sent. It stays the
	// same across redeliveries; use it to spot duplicates.
	ID string

	// Body is the message body as sent (SQS bodies are text, up to 1 MiB
	// with the message attributes: MaxMessageSize).
	Body string

	// MessageAttributes are the user-defined attributes sent with the message.
	MessageAttributes map[string]MessageAttribute

	// Attributes are the SQS system attributes, raw, keyed by their SQS name:
	// those named by the Attr… constants that the message has.
	Attributes map[string]string

	// ReceiveCount is the approximate receive count, including this receive: 1
	// on the first delivery. After the queue's maxReceiveCount SQS moves the
	// message to its dead-letter queue instead of delivering it again.
	ReceiveCount int

	// SentAt is when the message was sent (SentTimestamp).
	SentAt time.Time

	// FirstReceivedAt is when the message was first received
	// (ApproximateFirstReceiveTimestamp).
	FirstReceivedAt time.Time

	// MessageGroupID is the message group: a FIFO queue's (order kept
	// within it), or the one a standard (fair) queue's message was sent
	// with; empty when none.
	MessageGroupID string

	// ReceiptHandle identifies this receive of the message. Every receive gives
	// a new one; only the newest reliably deletes or changes visibility.
	// Treat it as a secret-ish token: do not log it at INFO.
	ReceiptHandle string

	// ReceivedAt is, by the receiver's clock, no later than the moment the
	// queue started this receive's visibility timeout, and no earlier than
	// it by more than the Mailbox's bound on one network round trip; every
	// Mailbox keeps this rule.
	// memmailbox stamps the moment it took the message (exact). sqsmailbox
	// stamps max(sentAt, arrivedAt - rto): sentAt just before the
	// ReceiveMessage request, arrivedAt just after its answer, rto its bound
	// on one round trip, measured (RFC 6298) on its calls that do not wait
	// on the server; 1 s early at most before it has measured a round trip.
	// So a message that arrives late in a long poll is stamped about a
	// round trip before it arrived, not when the poll began (SQS starts the
	// visibility timeout when it hands the message out). Lease deadlines
	// (ReceivedAt + VisibilityTimeout) and the 12-hour visibility ceiling
	// count from here, so they err early, never late.
	ReceivedAt time.Time

	// VisibilityTimeout is the visibility timeout this receive was asked for:
	// the message stays hidden until ReceivedAt + VisibilityTimeout unless
	// extended.
	VisibilityTimeout time.Duration
}

// SetSystemAttributes sets m.Attributes, a new map, from m's typed fields,
// as SQS writes them (the inverse of ParseSystemAttributes), for a Mailbox
// that keeps them typed (memmailbox, sqlmailbox): ApproximateReceiveCount
// (ReceiveCount), SentTimestamp (SentAt) and
// ApproximateFirstReceiveTimestamp (FirstReceivedAt), in decimal
// milliseconds since the Unix epoch; MessageGroupId when MessageGroupID is
// set; and, when sequenceNumber is not empty (a FIFO queue's message, the
// only kind SQS gives them), MessageDeduplicationId (dedupID) and
// SequenceNumber. Like every write of a Message, it is not safe for
// concurrent use on the same m.
func (m *Message) SetSystemAttributes(dedupID, sequenceNumber string) {
	n := 3
	switch {
	case sequenceNumber != "":
		n = 6
	case m.MessageGroupID != "":
		n = 4
	}
	attrs := make(map[string]string, n)
	attrs[AttrApproximateReceiveCount] = strconv.Itoa(m.ReceiveCount)
	attrs[AttrSentTimestamp] = strconv.FormatInt(m.SentAt.UnixMilli(), 10)
	attrs[AttrApproximateFirstReceiveTimestamp] = strconv.FormatInt(m.FirstReceivedAt.UnixMilli(), 10)
	if m.MessageGroupID != "" {
		attrs[AttrMessageGroupID] = m.MessageGroupID
	}
	if sequenceNumber != "" {
		attrs[AttrMessageDeduplicationID] = dedupID
		attrs[AttrSequenceNumber] = sequenceNumber
	}
	m.Attributes = attrs
}
