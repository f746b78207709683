// Package rules holds what the consumer (package consumer) and the Lambda
// adapter (package sqslambda) both decide about a message, written once so
// that a handler behaves the same in both runtimes:
//
//   - the outcome of a handler run (Run.Event), as sqsloop.ProcessEvent
//     reports it;
//   - when a lost lease counts as "never beat" (NeverBeat), which the lease
//     owner (internal/leases) decides once per lease, for its LeaseLost
//     event, its count and its WARN, and the runtimes read back for their
//     ProcessEnd event;
//   - which messages belong to a FIFO queue's message group (FIFO), for the
//     order of a group and for a poison message's copy;
//   - what an error of a queue call means for the next attempt (FaultOf):
//     one table for the lease owner, the consumer's receives, the producer
//     and sqslambda's queue check;
//   - the panic recovery around a handler (Wrap, IsPanic), the retry delay of
//     a failed message (RetryDelay, reading sqsloop.NackAfter's delay), and
//     the copy of a poison message to the dead-letter queue (DeadLetters).
//
// It imports only the root package, so that every package of the library
// may use it. Nothing here is user API: the handler contract users name
// (sqsloop.Handler, sqsloop.NackAfter, sqsloop.Permanent, the poison
// attributes) is the root's, and this package applies it.
package rules
