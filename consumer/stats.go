package consumer

import (
	"sync/atomic"

	"github.com/sqsloop/sqsloop/visibility"
)

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
	// Abandoned counts handlers still running DrainGrace after the drain
	// budget cancelled them: their messages were given back and Run did
	// not wait for them.
	Abandoned int64
	// ReceiveCalls and ReceiveErrors count ReceiveMessage calls.
	ReceiveCalls, ReceiveErrors int64
	// Poisoned counts messages whose handler failed with Permanent and
	// that were copied to the dead-letter queue (their acks are in Acked).
	Poisoned int64
	// Waited counts the waits of messages in their leases for a limit
	// (Config.GroupLimit, Config.RateLimits): a message may wait more
	// than once. Deferred counts the messages sent back to the queue with
	// a delay for a limit (no failure; in Nacked too). SlowedDown counts
	// handler runs that returned sqsloop.SlowDown (nacked after its
	// retry-after, not in Failed).
	Waited, Deferred, SlowedDown int64

	// Stats are the lease owner's counts: the acks (Acked, LateAcked,
	// AckFailed, AckRetries, AckUnsent), the nacks and give-backs (Nacked,
	// GivenBack, NackFailed), the extensions (Extensions, ExtensionCalls,
	// LargestExtensionBatch), the lost leases (LeasesLost,
	// LeasesLostNeverBeat) and the leases held now (Held).
	visibility.Stats
}

// counters are the consumer's live counts; running is a gauge of handlers
// running now.
type counters struct {
	received, redelivered, started, succeeded, failed, panics atomic.Int64
	running, abandoned                                        atomic.Int64
	receiveCalls, receiveErrors                               atomic.Int64
	poisoned                                                  atomic.Int64
	waited, deferred, slowed                                  atomic.Int64
}
