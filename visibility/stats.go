package visibility

import "sync/atomic"

// Stats counts a Manager's work since it was created. Entries are
// messages; calls are batch calls of at most 10 entries.
type Stats struct {
	// Held is the number of leases held now: from Hold until their
	// decided call succeeded, failed for good, or the lease was lost with
	// nothing left to send. 0 once Run has returned: nothing is served
	// any more.
	Held int64

	// ExtensionCalls is the number of ChangeMessageVisibilityBatch calls
	// that extended leases; Extended counts the entries that succeeded,
	// ExtensionFailures those that failed transiently (tried again at the
	// next look).
	ExtensionCalls, Extended, ExtensionFailures int64
	// LargestExtensionBatch is the most entries one extension call carried
	// (≤ 10).
	LargestExtensionBatch int64
	// Lost is the number of leases lost: stale receipt handle, no beat,
	// the 12-hour ceiling, extension failures until the deadline, or an
	// ack that kept failing until the lease ended.
	Lost int64
	// LostNeverBeat counts, among Lost, leases that lapsed while their
	// handler had never beaten its heartbeat once: handlers that cannot
	// keep any lease (the first is logged at WARN, the others counted).
	LostNeverBeat int64

	// DeleteCalls is the number of DeleteMessageBatch calls. Acked counts
	// messages deleted while their lease held; LateAcked those acked after
	// their lease was lost, which SQS may report as deleted while deleting
	// nothing (an old receipt handle); AckFailed acks that failed for good
	// (stale handle, permanent error, the one attempt of a late ack, or
	// unsent when Run returned); AckRetries failed attempts that were
	// tried again (or would have been, had Run not returned).
	DeleteCalls, Acked, LateAcked, AckFailed, AckRetries int64
	// AckUnsent counts, among AckFailed, the acks decided but not sent
	// when Run returned: never sent, or sent and failed (or cut off)
	// without a retry that succeeded before the flush ended (see Stop).
	// Their messages will run again once their leases end.
	AckUnsent int64

	// NackCalls is the number of ChangeMessageVisibilityBatch calls that
	// nacked or gave back messages. Nacked counts failed messages made
	// visible after their back-off; GivenBack unstarted or drained
	// messages made visible at once; NackFailed those whose nack or
	// give-back failed for good (they become visible when their lease
	// ends).
	NackCalls, Nacked, GivenBack, NackFailed int64
}

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
func (m *Manager) Stats() Stats {
	s := &m.st
	return Stats{
		Held:           s.held.Load(),
		ExtensionCalls: s.extendCalls.Load(), Extended: s.extended.Load(), ExtensionFailures: s.failures.Load(),
		LargestExtensionBatch: s.largest.Load(), Lost: s.lost.Load(), LostNeverBeat: s.neverBeat.Load(),
		DeleteCalls: s.deleteCalls.Load(), Acked: s.acked.Load(), LateAcked: s.lateAcked.Load(),
		AckFailed: s.ackFailed.Load(), AckRetries: s.ackRetries.Load(), AckUnsent: s.ackUnsent.Load(),
		NackCalls: s.changeCalls.Load(), Nacked: s.nacked.Load(), GivenBack: s.givenBack.Load(), NackFailed: s.nackFailed.Load(),
	}
}

// Add returns the sums of s's and o's counts, as of two Managers that
// served one after the other (sqslambda runs one per invocation):
// LargestExtensionBatch is the larger of the two, and Held, a gauge, the
// sum.
func (s Stats) Add(o Stats) Stats {
	return Stats{
		Held:           s.Held + o.Held,
		ExtensionCalls: s.ExtensionCalls + o.ExtensionCalls, Extended: s.Extended + o.Extended,
		ExtensionFailures:     s.ExtensionFailures + o.ExtensionFailures,
		LargestExtensionBatch: max(s.LargestExtensionBatch, o.LargestExtensionBatch),
		Lost:                  s.Lost + o.Lost, LostNeverBeat: s.LostNeverBeat + o.LostNeverBeat,
		DeleteCalls: s.DeleteCalls + o.DeleteCalls, Acked: s.Acked + o.Acked, LateAcked: s.LateAcked + o.LateAcked,
		AckFailed: s.AckFailed + o.AckFailed, AckRetries: s.AckRetries + o.AckRetries, AckUnsent: s.AckUnsent + o.AckUnsent,
		NackCalls: s.NackCalls + o.NackCalls, Nacked: s.Nacked + o.Nacked, GivenBack: s.GivenBack + o.GivenBack,
		NackFailed: s.NackFailed + o.NackFailed,
	}
}
