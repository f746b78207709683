package sqslambda

import (
	"context"
	"fmt"
	"strings"

	"github.com/sqsloop/sqsloop"
)

// Queue is the SQS queue a batch's records come from, as the Handler calls
// it when Config.OpenQueue gives one: the lease owner's visibility changes
// (extensions, nacks after the back-off, give-backs; it never deletes: the
// event source mapping deletes the records reported as processed) and,
// once per execution environment, the queue's attributes (visibility
// timeout, redrive policy) for the checks of the package doc. A Queue
// that is also a sqsloop.DeadLetterQueueOpener gets the copies of the
// records that fail with sqsloop.Permanent sent to its dead-letter queue.
// *sqsmailbox.Mailbox satisfies both (over an *sqs.Client), and so does
// *memmailbox.Queue; errors are read by the sqsloop sentinels, as a
// consumer reads a Mailbox's (sqsloop.ErrReceiptHandleExpired ends one
// record's lease, sqsloop.ErrAccessDenied is tried again and counted, …).
// The Handler calls it from several goroutines at once.
type Queue interface {
	// ChangeVisibility is sqsloop.Mailbox's: extensions, nacks after the
	// back-off, give-backs (ChangeMessageVisibilityBatch).
	ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error)
	// Delete is sqsloop.Mailbox's (DeleteMessageBatch); the Handler never
	// calls it, but a Queue is a queue's client.
	Delete(ctx context.Context, receiptHandles []string) ([]error, error)
	sqsloop.AttributesReader
}

// dnsSuffixes are the domains of SQS's endpoints in the partitions QueueURL
// knows.
var dnsSuffixes = map[string]string{
	"aws":        "amazonaws.com",
	"aws-cn":     "amazonaws.com.cn",
	"aws-us-gov": "amazonaws.com",
}

// QueueURL returns the URL of the SQS queue that an event source ARN names
// (a record's eventSourceARN): "arn:aws:sqs:us-east-2:123456789012:jobs"
// gives "https://sqs.us-east-2.amazonaws.com/123456789012/jobs", the form
// GetQueueUrl returns. It knows the partitions aws, aws-cn and aws-us-gov.
// An ARN that is not an SQS queue's in one of them gives an error wrapping
// sqsloop.ErrInvalidArgument that quotes it.
func QueueURL(eventSourceARN string) (string, error) {
	parts := strings.Split(eventSourceARN, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[3] == "" || parts[4] == "" || parts[5] == "" {
		return "", fmt.Errorf("sqslambda: eventSourceARN %q: want arn:PARTITION:sqs:REGION:ACCOUNT:QUEUE: %w", eventSourceARN, sqsloop.ErrInvalidArgument)
	}
	suffix, ok := dnsSuffixes[parts[1]]
	if !ok {
		return "", fmt.Errorf("sqslambda: eventSourceARN %q: partition %q: want aws, aws-cn or aws-us-gov: %w", eventSourceARN, parts[1], sqsloop.ErrInvalidArgument)
	}
	return "https://sqs." + parts[3] + "." + suffix + "/" + parts[4] + "/" + parts[5], nil
}
