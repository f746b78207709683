// Package sqsloop holds the contracts shared by every part of sqsloop: the
// received [Message], the batch-shaped [Mailbox] that an SQS queue (package
// sqsmailbox) or an in-memory queue (package memmailbox) implements, and the
// sentinel errors callers match with [errors.Is].
//
// The package imports no other package of the project. Policy (leases,
// heartbeats, retries, batching windows) lives above it, in packages
// visibility and consumer; a Mailbox makes one SQS call per method, retries
// nothing and starts no goroutines. Package mailboxtest is the conformance
// suite every Mailbox runs from its own tests.
package sqsloop
