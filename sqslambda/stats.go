package sqslambda

import (
	"sync"
	"sync/atomic"

	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/visibility"
)

// Stats counts a Handler's work since it was created (one execution
// environment), summed over its invocations. Every field is a count of
// records unless it says otherwise. The lease owners' counts (Nacked to
// LeasesLostNeverBeat) are those of the invocations' lease owners, with a
// client; 0 without one.
type Stats struct {
	// Invocations counts the calls of Handle.
	Invocations int64
	// Received counts the records handed to Handle; Redelivered those with
	// a receive count above 1.
	Received, Redelivered int64
	// Started counts the handler runs; Succeeded and Failed their results
	// (errors, panics, and records whose handler was cut short by the
	// deadline); Panics the panics among them.
	Started, Succeeded, Failed, Panics int64
	// Abandoned counts handlers still running DeadlineMargin/4 after their
	// contexts ended, whose records were reported failed without waiting
	// for them.
	Abandoned int64
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
	// Acked counts records reported as processed, which the event source
	// mapping deletes (the Handler never does), and LateAcked those of them
	// whose lease the lease owner had already seen lapse (their delete may
	// find a newer receipt handle; the record may run again).
	Acked, LateAcked int64
	// Poisoned counts records whose handler failed with sqsloop.Permanent
	// and that were copied to the dead-letter queue (also in Failed, and
	// in Acked: reported processed).
	Poisoned int64

	// NackCalls counts the ChangeMessageVisibilityBatch calls that nacked
	// or gave back records; Nacked the failed records made visible after
	// their back-off, GivenBack the records not run made visible at once,
	// NackFailed those whose nack or give-back failed for good (they
	// become visible when their lease ends).
	NackCalls, Nacked, GivenBack, NackFailed int64
	// ExtensionCalls counts the ChangeMessageVisibilityBatch calls that
	// extended leases; Extensions the entries that succeeded,
	// ExtensionFailures those that failed transiently; LargestExtensionBatch
	// is the most entries one call carried (≤ 10).
	ExtensionCalls, Extensions, ExtensionFailures, LargestExtensionBatch int64
	// LeasesLost counts the leases lost (visibility.Stats.LeasesLost), with
	// those that had lapsed before their invocation began;
	// LeasesLostNeverBeat those that lapsed while their handler ran without
	// beating once.
	LeasesLost, LeasesLostNeverBeat int64
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
	l := c.leases
	c.mu.Unlock()
	return Stats{
		Invocations: c.invocations.Load(),
		Received:    c.received.Load(), Redelivered: c.redelivered.Load(),
		Started: c.started.Load(), Succeeded: c.succeeded.Load(), Failed: c.failed.Load(), Panics: c.panics.Load(),
		Abandoned: c.abandoned.Load(),
		Skipped:   c.skipped.Load(), CutOff: c.cutOff.Load(), ItemFailures: c.itemFailures.Load(),
		Acked: c.acked.Load(), LateAcked: c.lateAcked.Load(), // the lease owner never deletes: the event source mapping does
		Poisoned:  c.poisoned.Load(),
		NackCalls: l.NackCalls, Nacked: l.Nacked, GivenBack: l.GivenBack, NackFailed: l.NackFailed,
		ExtensionCalls: l.ExtensionCalls, Extensions: l.Extensions, ExtensionFailures: l.ExtensionFailures,
		LargestExtensionBatch: l.LargestExtensionBatch,
		LeasesLost:            l.LeasesLost + c.lapsed.Load(), LeasesLostNeverBeat: l.LeasesLostNeverBeat,
	}
}
