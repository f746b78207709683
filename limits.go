package sqsloop

import "time"

// Limits that come from Amazon SQS itself. Both mailboxes enforce them, and the
// consumer and the lease extender size their requests by them.
const (
	// MaxBatchSize is the most entries one ReceiveMessage (MaxNumberOfMessages),
	// DeleteMessageBatch, ChangeMessageVisibilityBatch or SendMessageBatch call
	// takes. SQS caps every batch at 10 entries.
	MaxBatchSize = 10

	// MaxVisibilityTimeout is the longest visibility timeout SQS accepts
	// (43,200 s), and also the longest a message can stay hidden after the
	// receive that produced its receipt handle, however often it is extended.
	MaxVisibilityTimeout = 12 * time.Hour

	// MaxWaitTime is the longest long poll SQS allows (WaitTimeSeconds 20).
	MaxWaitTime = 20 * time.Second

	// MaxDelay is the longest delivery delay SQS allows on a message or a
	// nack (DelaySeconds 900).
	MaxDelay = 15 * time.Minute

	// MaxMessageSize is the most bytes one sent message may take, its body
	// and message attributes (names, data types and values) together, and
	// also the most a whole SendMessageBatch may take, summed over its
	// messages: 1 MiB (1,048,576 bytes). SQS caps both at 1 MiB (the SDK's
	// SendMessage and SendMessageBatch docs); a queue's MaximumMessageSize
	// attribute may set a lower cap (1,024 bytes to 1 MiB).
	MaxMessageSize = 1 << 20

	// MaxMessageAttributes is the most message attributes one sent message
	// may carry: 10 (the SDK's SendMessage doc). ValidateSend enforces it.
	MaxMessageAttributes = 10
)

// Limits of a bulk send (BulkSender.SendBulk), which SQS has not: ours,
// so that one call stays one statement of bounded size on a database.
const (
	// MaxBulkSize is the most messages one SendBulk call takes: 1,000.
	MaxBulkSize = 1000

	// MaxBulkBytes is the most bytes one SendBulk call may take, summed
	// over its messages as MaxMessageSize counts them: 16 MiB
	// (16,777,216 bytes). Each message is still at most MaxMessageSize.
	MaxBulkBytes = 16 << 20
)
