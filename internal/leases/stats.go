package leases

import (
	"sync/atomic"

	"github.com/sqsloop/sqsloop/visibility"
)

// counters are the Manager's live counts.
type counters struct {
	held                                       atomic.Int64
	extendCalls, extended, failures, largest   atomic.Int64
	lost, neverBeat                            atomic.Int64
	deleteCalls, acked, lateAcked, ackFailed   atomic.Int64
	ackRetries, ackUnsent                      atomic.Int64
	changeCalls, nacked, givenBack, nackFailed atomic.Int64
}

// Stats returns the Manager's counters. Safe for concurrent use.
func (m *Manager) Stats() visibility.Stats {
	s := &m.st
	return visibility.Stats{
		Held:           s.held.Load(),
		ExtensionCalls: s.extendCalls.Load(), Extensions: s.extended.Load(), ExtensionFailures: s.failures.Load(),
		LargestExtensionBatch: s.largest.Load(), LeasesLost: s.lost.Load(), LeasesLostNeverBeat: s.neverBeat.Load(),
		DeleteCalls: s.deleteCalls.Load(), Acked: s.acked.Load(), LateAcked: s.lateAcked.Load(),
		AckFailed: s.ackFailed.Load(), AckRetries: s.ackRetries.Load(), AckUnsent: s.ackUnsent.Load(),
		NackCalls: s.changeCalls.Load(), Nacked: s.nacked.Load(), GivenBack: s.givenBack.Load(), NackFailed: s.nackFailed.Load(),
	}
}

// AddStats returns the sums of s's and o's counts, as of two Managers that
// served one after the other (sqslambda runs one per invocation):
// LargestExtensionBatch is the larger of the two, and Held, a gauge, the
// sum.
func AddStats(s, o visibility.Stats) visibility.Stats {
	return visibility.Stats{
		Held:           s.Held + o.Held,
		ExtensionCalls: s.ExtensionCalls + o.ExtensionCalls, Extensions: s.Extensions + o.Extensions,
		ExtensionFailures:     s.ExtensionFailures + o.ExtensionFailures,
		LargestExtensionBatch: max(s.LargestExtensionBatch, o.LargestExtensionBatch),
		LeasesLost:            s.LeasesLost + o.LeasesLost, LeasesLostNeverBeat: s.LeasesLostNeverBeat + o.LeasesLostNeverBeat,
		DeleteCalls: s.DeleteCalls + o.DeleteCalls, Acked: s.Acked + o.Acked, LateAcked: s.LateAcked + o.LateAcked,
		AckFailed: s.AckFailed + o.AckFailed, AckRetries: s.AckRetries + o.AckRetries, AckUnsent: s.AckUnsent + o.AckUnsent,
		NackCalls: s.NackCalls + o.NackCalls, Nacked: s.Nacked + o.Nacked, GivenBack: s.GivenBack + o.GivenBack,
		NackFailed: s.NackFailed + o.NackFailed,
	}
}
