package sqslambda

import (
	"sync"
	"sync/atomic"

	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/visibility"
)

// Stats counts a Handler's work since it was created (one execution
// environment), summed over its invocations.
//
// The embedded consumer.Stats are the consumer's counters, as they apply
// on Lambda: Received counts records handed to Handle and Redelivered
// those with a receive count above 1; Started, Succeeded, Failed (errors,
// panics, and records whose handler was cut short by the deadline) and
// Panics count handler runs; Abandoned counts handlers still running
// DeadlineMargin/4 after their contexts ended, whose records were reported
// failed without waiting for them. Acked counts records reported as
// processed, which the event source mapping deletes, and LateAcked those
// of them whose lease the lease owner had already seen lapse (their
// delete may find a newer receipt handle; the record may run again);
// AckFailed and AckRetries stay 0. Poisoned counts records whose handler
// failed with consumer.Permanent and that were copied to the dead-letter
// queue (also in Failed, and in Acked: reported processed). Nacked,
// GivenBack, NackFailed, Extensions, ExtensionCalls,
// LargestExtensionBatch, LeasesLost and LeasesLostNeverBeat (and the
// calls: DeleteCalls, NackCalls, ExtensionFailures) are the lease owners'
// (visibility.Stats; with a client, 0 without), LeasesLost with the leases
// that had lapsed before their invocation began; Held is 0 (a lease owner
// holds leases while its invocation runs, and is added when it ends). ReceiveCalls and ReceiveErrors
// stay 0: the event source mapping receives.
type Stats struct {
	consumer.Stats

	// Invocations counts the calls of Handle.
	Invocations int64
	// Skipped counts FIFO records reported failed without running because
	// an earlier record of their message group (or, with
	// Config.FIFOStopOnFailure, of the batch) failed.
	Skipped int64
	// CutOff counts records reported failed without running because the
	// invocation's deadline was near (Config.DeadlineMargin), or because
	// their lease lapsed while they waited, or before the invocation began
	// (with a client: received a visibility timeout or more before it;
	// these count in LeasesLost too, sqsloop.LostBeforeStart).
	CutOff int64
	// ItemFailures counts the message IDs reported in batchItemFailures.
	ItemFailures int64
}

// counters are a Handler's live counts.
type counters struct {
	invocations, received, redelivered atomic.Int64
	started, succeeded, failed, panics atomic.Int64
	abandoned, acked, lateAcked        atomic.Int64
	skipped, cutOff, itemFailures      atomic.Int64
	poisoned, lapsed                   atomic.Int64 // lapsed: leases lost before the invocation began (not the lease owners')

	mu     sync.Mutex
	leases visibility.Stats // summed over the invocations' lease owners (largest batch: the largest)
}

// addLeases adds the counts of one invocation's lease owner.
func (c *counters) addLeases(s visibility.Stats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leases = leases.AddStats(c.leases, s)
}

// Stats returns the Handler's counters. Safe for concurrent use, also
// while invocations run (their lease owners' counts are added when they
// end).
func (h *Handler) Stats() Stats {
	c := &h.st
	c.mu.Lock()
	s := consumer.Stats{Stats: c.leases}
	c.mu.Unlock()
	s.LeasesLost += c.lapsed.Load()
	s.Received, s.Redelivered = c.received.Load(), c.redelivered.Load()
	s.Started, s.Succeeded, s.Failed = c.started.Load(), c.succeeded.Load(), c.failed.Load()
	s.Panics, s.Abandoned = c.panics.Load(), c.abandoned.Load()
	s.Acked, s.LateAcked = c.acked.Load(), c.lateAcked.Load() // the lease owner never deletes: the event source mapping does
	s.Poisoned = c.poisoned.Load()
	return Stats{
		Stats:       s,
		Invocations: c.invocations.Load(),
		Skipped:     c.skipped.Load(), CutOff: c.cutOff.Load(), ItemFailures: c.itemFailures.Load(),
	}
}
