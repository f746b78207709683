// Package idempotency runs a message's handler once per key, however often
// the message is delivered: SQS delivers at least once, and a job whose
// ack was lost (a crash between the handler's return and the delete, a
// network failure, a lease that lapsed just before the ack) would
// otherwise run again in full. It does what Powertools for AWS Lambda's
// Idempotency utility does, as a handler middleware (Idempotency.
// Middleware, in consumer.Config.Middleware or sqslambda.Config.
// Middleware alike), on a jobstate.Store:
//
//  1. Before the handler runs, it claims the message's key: the store
//     records it in progress, held by this run for as long as the
//     message's lease: the length each extension of the lease asks for
//     (sqsloop.LeaseFromContext(ctx).Extension(), read again at every
//     renewal, so the lease owner's adaptive choice and a handler's
//     SetExtension count), and half as long again; without a lease
//     owner (a test, sqslambda without a client), the message's
//     visibility timeout, or DefaultLease (30 s) when it does not say.
//     The claim is renewed while the handler beats its heartbeat, as the
//     lease is, so a handler whose lease holds (however long past the
//     visibility timeout) holds its key.
//  2. When the handler returns nil, it records the key completed (with
//     the result the handler set with SetResult, if any), kept for
//     Config.Retention. When the handler fails or panics, it releases the
//     claim, so that the retry runs.
//  3. A delivery whose key is completed is acked without running the
//     handler (or handed to Config.OnDuplicate with the stored result).
//  4. A delivery whose key another run holds under a live lease (another
//     consumer, another message with the same key) is not run beside it:
//     it is nacked with a delay that ends when that lease does (the error
//     matches ErrInProgress and carries the delay as sqsloop.NackAfter
//     does). If that run's process died, its lease lapses, and the next
//     delivery runs the job.
//
// The key is the message ID by default, or what Config.Key derives from
// the message (an order ID in the body, so that two messages about one
// order run once). Only the store's conditional write (jobstate.Store.
// Claim) decides who runs a key, so that what is said above holds across
// processes sharing a store: memory for one process (jobstate.Memory),
// SQLite or PostgreSQL (jobstate/sqlitestate, jobstate/pgstate), DynamoDB
// (jobstate/dynamostore).
//
// What it cannot do: make the handler's own effects atomic with the
// completion record. A crash after the handler's effects and before the
// record is written (one store write) runs the job again; the window is one
// store round trip instead of the whole ack path. A run that stops beating
// for a whole lease (a stuck handler) loses its claim as it loses its
// message: another run may then take the key while it still runs; a run
// that finds at its next renewal that another holds its key has its
// context cancelled with ErrClaimLost. Each nack of a busy key counts
// toward the queue's maxReceiveCount: a key held for many leases by a long
// job can push its duplicates into the dead-letter queue.
//
// Cost, per message: one conditional write to claim, one write to
// complete (or one delete to release), plus at most one renewal per third
// of the lease's length of a beating handler's run. A duplicate costs the refused claim only (on the
// SQL stores a second statement reads the record that refused it).
// internal/jobbench.Benchmark measures it on each store.
//
// The package imports the root, heartbeat and jobstate only.
package idempotency
