package visibility

// Stats counts what a lease owner did since it was created: the part of
// consumer.Stats that the lease owner counts, embedded there (sqslambda.Stats
// has those of its fields that apply on Lambda, summed over its
// invocations). Entries are messages; calls are batch calls of at most 10
// entries.
type Stats struct {
	// Held is the number of leases held now: from the receive until their
	// decided call succeeded, failed for good, or the lease was lost with
	// nothing left to send. 0 once the lease owner has stopped.
	Held int64

	// ExtensionCalls is the number of ChangeMessageVisibilityBatch calls
	// that extended leases; Extensions counts the entries that succeeded,
	// ExtensionFailures those that failed transiently (tried again at the
	// next look).
	ExtensionCalls, Extensions, ExtensionFailures int64
	// LargestExtensionBatch is the most entries one extension call carried
	// (≤ 10).
	LargestExtensionBatch int64
	// LeasesLost is the number of leases lost: stale receipt handle, no
	// beat, the 12-hour ceiling, extension failures until the deadline, or
	// an ack that kept failing until the lease ended.
	LeasesLost int64
	// LeasesLostNeverBeat counts, among LeasesLost, leases that lapsed
	// while their handler ran without beating its heartbeat once since it
	// started: handlers that cannot keep any lease (the first is logged at
	// WARN with what to do, the others only counted).
	LeasesLostNeverBeat int64

	// DeleteCalls is the number of DeleteMessageBatch calls. Acked counts
	// messages deleted while their lease held; LateAcked those acked after
	// their lease was lost, which SQS may report as deleted while deleting
	// nothing (an old receipt handle), so the message may run again;
	// AckFailed acks that failed for good (stale handle, permanent error,
	// the one attempt of a late ack, or unsent when the lease owner
	// stopped); AckRetries failed attempts that were tried again.
	DeleteCalls, Acked, LateAcked, AckFailed, AckRetries int64
	// AckUnsent counts, among AckFailed, the acks decided but not sent
	// when the lease owner stopped: the drain budget (at least 1 s after
	// the handlers were done) ran out while the mailbox was slow or
	// failing, or an interrupt cut it short. Their messages run again once
	// their leases end; a consumer's drain logs them too.
	AckUnsent int64

	// NackCalls is the number of ChangeMessageVisibilityBatch calls that
	// nacked or gave back messages. Nacked counts failed messages made
	// visible after their back-off; GivenBack unstarted, interrupted or
	// abandoned messages made visible at once; NackFailed those whose nack
	// or give-back failed for good (they become visible when their lease
	// ends).
	NackCalls, Nacked, GivenBack, NackFailed int64
}
