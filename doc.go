// Package sqsloop holds the contracts shared by every part of sqsloop: the
// received [Message], the batch-shaped [Mailbox] that an SQS queue (package
// sqsmailbox) or an in-memory queue (package memmailbox) implements, the
// sentinel errors callers match with [errors.Is], and the limits and request
// rules of SQS that every Mailbox checks ([ReceiveRequest.Validate],
// [ValidateDelete], [ValidateChangeVisibility], [ValidateSend],
// [WholeSeconds]).
//
// It also holds the handler contract, the same in every runtime (package
// consumer, package sqslambda) and named by every middleware (packages
// checkpoint and idempotency) without importing a runtime: [Handler] and
// [Middleware]; what a handler's error may say ([NackAfter], [Permanent]);
// the retry back-off ([ExponentialBackoff]); and what a handler's context
// says of its message's lease ([Lease], [LeaseFromContext],
// [SetExtension]).
//
// The package imports no other package of the project. Policy (leases,
// heartbeats, retries, batching windows) lives above it, in packages
// visibility and consumer; a Mailbox makes one SQS call per method, retries
// nothing and starts no goroutines. Package mailboxtest is the conformance
// suite every Mailbox runs from its own tests.
package sqsloop
