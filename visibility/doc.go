// Package visibility says how received messages are kept hidden while
// their handlers work, and settled when they are done: the lease owner of a
// consumer (package consumer) and of sqslambda's invocations, tuned by
// [Config], its lost leases reported with [ErrLeaseLost], its work counted
// in [Stats].
//
// A lease is the time a received message stays hidden. One lease owner
// holds every in-flight message of a consumer and is the only one to change
// its visibility or delete it, from one goroutine. It keeps the leases in a
// heap ordered by when each is next due; when leases come due it extends
// the alive ones with ChangeMessageVisibilityBatch calls of at most 10
// entries (SQS's batch limit), filling each call with other alive leases
// that would come due within the next interval, so n in-flight messages
// cost about ceil(n/10) calls per interval. There is no goroutine and no
// timer per message.
//
// By default a lease is heartbeat-gated: it is extended only if its handler
// has beaten its heartbeat (package heartbeat) since the previous extension (or
// since the receive). A handler that stops beating gets no more extensions,
// its lease lapses, and another worker receives the message.
// [Config].FixedInterval extends without proof of work, for handlers that
// cannot beat, bounded by Config.MaxExtension.
//
// When the handler is done (ack, nack after the retry back-off, give-back),
// the lease owner stops extending the lease on beats and sends the
// decision, batched with others of its kind within 50 ms:
// DeleteMessageBatch for acks, ChangeMessageVisibilityBatch for nacks and
// give-backs. A lease is in at most one call at a time, so the calls about
// one receipt handle leave in the order they were decided. An ack that
// fails transiently is tried again with back-off while the lease owner
// keeps its lease alive.
//
// No lease outlives the 12-hour ceiling SQS puts on a message's visibility
// after the receive that produced its receipt handle: the last extension is
// clamped to it and the lease is reported lost with [sqsloop.ErrLeaseCeiling]
// when it ends.
package visibility
