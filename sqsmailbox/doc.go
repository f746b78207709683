// Package sqsmailbox is a [sqsloop.Mailbox] over Amazon SQS, built on
// github.com/aws/aws-sdk-go-v2/service/sqs. It also works against
// SQS-compatible servers (LocalStack, ElasticMQ, fauxqs): pass their address to
// [NewClient]. Importing it registers its URLs with sqsloop.OpenMailbox: a
// queue URL (https://sqs.eu-west-1.amazonaws.com/123456789012/jobs, or an
// emulator's, http://127.0.0.1:4566/000000000000/jobs) or
// sqs://jobs?region=…&endpoint=…, the queue looked up by name.
//
// Each Mailbox method is one SQS call: Receive is ReceiveMessage, Delete is
// DeleteMessageBatch, ChangeVisibility is ChangeMessageVisibilityBatch, Send is
// SendMessageBatch and QueueAttributes is GetQueueAttributes;
// OpenDeadLetterQueue (sqsloop.DeadLetterQueueOpener) reads the redrive
// policy and finds the dead-letter queue with GetQueueUrl. [CreateQueue]
// sets up a queue, its dead-letter queue and redrive policy from a
// sqsloop.QueueSpec in one idempotent call, for development and tests. The
// package
// retries nothing itself (throttling and 5xx answers are left to the SDK's
// retryer), starts no goroutines and logs nothing, so it never logs
// credentials or receipt handles.
//
// SQS errors are mapped, by error code and by the SDK's typed errors, to the
// sentinels of package sqsloop (see [Mailbox] for the table); the SDK's own
// error stays reachable with errors.As, so callers can still read its code,
// message and request ID.
//
// The package passes the conformance suite of package mailboxtest against
// the SQS-compatible server SQS_ENDPOINT names (conformance_test.go;
// scripts/test.sh starts one); without SQS_ENDPOINT that test skips, and
// under CI=true it fails.
package sqsmailbox
