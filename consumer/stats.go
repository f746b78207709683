package consumer

import "sync/atomic"

// Stats counts a Consumer's work since it was created. Every field is a
// count of messages unless it says otherwise.
type Stats struct {
	// Received is how many messages receives returned.
	Received int64
	// Redelivered is how many of those had been received before
	// (approximate receive count > 1).
	Redelivered int64
	// Started is how many handlers started.
	Started int64
	// Succeeded and Failed count handler results (a panic is a failure).
	Succeeded, Failed int64
	// Panics counts handler panics.
	Panics int64
	// Acked and AckFailed count DeleteMessageBatch entries.
	Acked, AckFailed int64
	// Nacked and NackFailed count ChangeMessageVisibilityBatch entries
	// that gave messages back (failures and the drain).
	Nacked, NackFailed int64
	// DrainNacked counts received-but-unstarted messages given back at once:
	// those a receive returned as shutdown began, those waiting behind a
	// running message of their FIFO group, and any a mailbox returned beyond
	// what was asked for.
	DrainNacked int64
	// ReceiveCalls and ReceiveErrors count ReceiveMessage calls.
	ReceiveCalls, ReceiveErrors int64
	// Extensions is how many lease extensions succeeded, in ExtensionCalls
	// ChangeMessageVisibilityBatch calls.
	Extensions, ExtensionCalls int64
	// LargestExtensionBatch is the most entries one extension call carried.
	LargestExtensionBatch int64
	// LeasesLost counts leases lost (stale receipt handle, no heartbeat,
	// the 12-hour ceiling, repeated failures).
	LeasesLost int64
}

// counters are the consumer's live counts.
type counters struct {
	received, redelivered, started, succeeded, failed, panics atomic.Int64
	acked, ackFailed, nacked, nackFailed, drainNacked         atomic.Int64
	receiveCalls, receiveErrors                               atomic.Int64
}
