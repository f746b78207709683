package sqsmailbox

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// API is the part of the SQS client that a Mailbox calls, in the SDK's own
// signatures, so that a *sqs.Client fits it and a test can pass a recording
// fake instead. Implementations must be safe for concurrent use (a
// *sqs.Client is), because the Mailbox's methods may be called from many
// goroutines at once, and must only read the inputs and per-call options
// they are given (as the SDK does): the Mailbox shares parts of them, such
// as batch entry Ids, between calls.
type API interface {
	// ReceiveMessage is sqs.Client.ReceiveMessage.
	ReceiveMessage(ctx context.Context, params *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	// DeleteMessageBatch is sqs.Client.DeleteMessageBatch.
	DeleteMessageBatch(ctx context.Context, params *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	// ChangeMessageVisibilityBatch is sqs.Client.ChangeMessageVisibilityBatch.
	ChangeMessageVisibilityBatch(ctx context.Context, params *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	// SendMessageBatch is sqs.Client.SendMessageBatch.
	SendMessageBatch(ctx context.Context, params *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	// GetQueueAttributes is sqs.Client.GetQueueAttributes.
	GetQueueAttributes(ctx context.Context, params *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	// GetQueueUrl is sqs.Client.GetQueueUrl (OpenDeadLetterQueue finds
	// the dead-letter queue with it).
	GetQueueUrl(ctx context.Context, params *sqs.GetQueueUrlInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
}

var _ API = (*sqs.Client)(nil)

// Per-call options the Mailbox passes to API calls, built once rather than
// on every call (the SDK only reads them; other API implementations may
// ignore them): every call tags credential-provider failures
// (tagCredentials), and ReceiveMessage also puts its zero values on the wire
// (sendZeros) and waits at most 1 s between the SDK's retries
// (capReceiveRetries).
var (
	receiveOptions = []func(*sqs.Options){sendZeros, tagCredentials, capReceiveRetries}
	callOptions    = []func(*sqs.Options){tagCredentials}
)

// receiveRetryDelay is the longest the SDK's retryer waits between two
// attempts of one ReceiveMessage call: 1 s, as the consumer's own back-off
// of failed receives, so that receiving resumes within a second of the
// endpoint answering again. The SDK's default retryer waits up to 2 s, then
// 4 s, between its 3 attempts (20 s at most): after an outage a receive
// could sleep 4 s in it while the endpoint was back.
const receiveRetryDelay = time.Second

// capReceiveRetries makes the client's retryer wait receiveRetryDelay at
// most between the attempts of a ReceiveMessage call; its other decisions
// (which errors, how many attempts, the retry quota) stand.
func capReceiveRetries(o *sqs.Options) {
	if o.Retryer != nil {
		o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, receiveRetryDelay)
	}
}
