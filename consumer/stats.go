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
	// Acked counts messages deleted while their lease held. LateAcked
	// counts acks sent after the lease was lost: SQS may report those as
	// deleted while deleting nothing (an old receipt handle), so the
	// message may run again. AckFailed counts acks that failed for good;
	// AckRetries failed ack attempts that were tried again.
	Acked, LateAcked, AckFailed, AckRetries int64
	// AckUnsent counts, among AckFailed, acks decided but still unsent
	// when Run returned: the drain budget (at least 1 s after the
	// handlers were done) ran out while the mailbox was slow or failing,
	// or Interrupt cut it short. Those messages run again once their
	// leases end; the drain's last log line reports them too.
	AckUnsent int64
	// Nacked counts failed messages made visible again after their
	// back-off; GivenBack unstarted, interrupted or abandoned messages made
	// visible at once; NackFailed those whose nack failed for good (they
	// become visible when their lease ends).
	Nacked, GivenBack, NackFailed int64
	// ReceiveCalls and ReceiveErrors count ReceiveMessage calls.
	ReceiveCalls, ReceiveErrors int64
	// Extensions is how many lease extensions succeeded, in ExtensionCalls
	// ChangeMessageVisibilityBatch calls.
	Extensions, ExtensionCalls int64
	// LargestExtensionBatch is the most entries one extension call carried.
	LargestExtensionBatch int64
	// LeasesLost counts leases lost (stale receipt handle, no heartbeat,
	// the 12-hour ceiling, extensions or an ack failing until the lease
	// ended).
	LeasesLost int64
	// LeasesLostNeverBeat counts, among LeasesLost, leases that lapsed
	// while their handler had never beaten its heartbeat once (the first
	// is logged at WARN with what to do, the others only counted).
	LeasesLostNeverBeat int64
	// Poisoned counts messages whose handler failed with Permanent and
	// that were copied to the dead-letter queue (their acks are in Acked).
	Poisoned int64
}

// LeaseStats returns the fields of Stats that the lease owner counts, from
// its counters (visibility.Manager.Stats): the acks (Acked, LateAcked,
// AckFailed, AckRetries, AckUnsent), the nacks and give-backs (Nacked, GivenBack,
// NackFailed), the extensions (Extensions, ExtensionCalls,
// LargestExtensionBatch) and the lost leases (LeasesLost,
// LeasesLostNeverBeat); the other fields are 0. A Consumer's Stats are
// made from it, and sqslambda's from its invocations' lease owners.
func LeaseStats(ls visibility.Stats) Stats {
	return Stats{
		Acked: ls.Acked, LateAcked: ls.LateAcked, AckFailed: ls.AckFailed, AckRetries: ls.AckRetries, AckUnsent: ls.AckUnsent,
		Nacked: ls.Nacked, GivenBack: ls.GivenBack, NackFailed: ls.NackFailed,
		Extensions: ls.Extended, ExtensionCalls: ls.ExtensionCalls, LargestExtensionBatch: ls.LargestExtensionBatch,
		LeasesLost: ls.Lost, LeasesLostNeverBeat: ls.LostNeverBeat,
	}
}

// counters are the consumer's live counts; running is a gauge of handlers
// running now.
type counters struct {
	received, redelivered, started, succeeded, failed, panics atomic.Int64
	running, abandoned                                        atomic.Int64
	receiveCalls, receiveErrors                               atomic.Int64
	poisoned                                                  atomic.Int64
}
