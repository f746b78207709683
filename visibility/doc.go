// Package visibility keeps received messages hidden while their handlers
// work: the lease extender.
//
// A lease is the time a received message stays hidden. One [Extender] serves
// every in-flight message of a consumer from one goroutine: it keeps the
// leases in a heap ordered by when each is next due, and when leases come due
// it extends them with ChangeMessageVisibilityBatch calls of at most 10
// entries (SQS's batch limit), filling each call with other alive leases that
// would come due within the next interval, so n in-flight messages cost about
// ceil(n/10) calls per interval. There is no goroutine and no timer per
// message.
//
// By default a lease is heartbeat-gated (policy [HeartbeatGated]): it is
// extended only if its handler has beaten its [heartbeat.Heartbeat] since the
// previous extension (or since the receive). A handler that stops beating
// gets no more extensions, its lease lapses, and another worker receives the
// message. [FixedInterval] extends without proof of work, for handlers that
// cannot beat, bounded by Config.MaxExtension.
//
// No lease outlives the 12-hour ceiling SQS puts on a message's visibility
// after the receive that produced its receipt handle: the last extension is
// clamped to it and the lease is reported lost with [sqsloop.ErrLeaseCeiling]
// when it ends.
package visibility
