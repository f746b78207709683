// Package memmailbox is an in-memory [sqsloop.Mailbox] with SQS semantics:
// for tests (the reference every other mailbox is checked against), demos,
// and work that may be lost with the process.
//
// A [Broker] holds named queues; sqsloop.OpenMailbox opens the queues of
// mem://NAME URLs in one Broker of the process, created at their first
// open (?max_receive_count=5 adds a dead-letter queue NAME-dlq,
// ?visibility_timeout=30s sets the visibility timeout).
// [Broker.CreateQueue] sets one up from a [sqsloop.QueueSpec], with its
// dead-letter queue and redrive policy (or returns a handle to an existing
// one with the same attributes); [Broker.Queue] returns a handle by name. A *[Queue] implements
// sqsloop.Mailbox, sqsloop.AttributesReader (with exact approximate counts)
// and sqsloop.DeadLetterQueueOpener.
//
// What it keeps from SQS:
//
//   - Visibility timeout: a received message is in flight, hidden from other
//     receives until its visibility deadline, then visible again (at least
//     once delivery). Every receive gives a new receipt handle; an older one
//     fails ChangeVisibility with sqsloop.ErrReceiptHandleExpired. Delete
//     with an older one succeeds and deletes nothing on a standard queue
//     (Stats.StaleDeletes counts it), and fails on a FIFO queue, whose
//     handles expire with the visibility timeout. A handle the queue never
//     issued fails either call with sqsloop.ErrReceiptHandleExpired.
//   - ChangeVisibility counts from now: 0 nacks (visible at once), more
//     extends; nothing stays hidden past 12 hours after the receive that
//     produced its handle (sqsloop.ErrLeaseCeiling).
//   - Delivery delay (queue Delay and per-message Delay), long polling up to
//     20 s, approximate receive count, redrive to a dead-letter queue (DLQ)
//     after MaxReceiveCount receives.
//   - FIFO queues: message groups, order within a group, one group in flight
//     at a time, 5-minute deduplication (explicit or content-based); a
//     receive takes as many messages of one group as it can before another
//     ("first attempts to return as many messages with the same message
//     group ID as possible", SQS's FIFO delivery logic), the group whose
//     next message was sent first.
//   - A MessageGroupID on a standard queue (SQS fair queues) is accepted and
//     reported on receive; as in SQS it neither orders nor holds back
//     anything. SequenceNumber and MessageDeduplicationId are reported on
//     FIFO queues only.
//   - Limits: batches of 1–10 entries, bodies of 1 byte to 1 MiB
//     (sqsloop.MaxMessageSize, body and message attributes together; a whole
//     Send batch too; a queue's MaxMessageSize may set less) of the
//     characters SQS accepts, at most 10 message attributes.
//
// Like SQS, it counts every duration in whole seconds, rounded up
// (sqsloop.WholeSeconds): a 1.5 s visibility timeout hides a message for 2 s.
// It checks requests with sqsloop's request rules (sqsloop.ValidateSend and
// its siblings), so it rejects what sqsmailbox rejects, with the same error.
//
// What differs: nothing expires by retention period (the queue reports
// its RetentionPeriod, and keeps every message); the queue is never
// eventually consistent (a deleted message never comes back); a fair queue
// does nothing for dwell time across message groups (there is no noisy
// neighbour to shield a tenant from: every receive takes the oldest visible
// messages); a standard queue delivers in a set order, which SQS does not:
// its messages in the order they became visible (sent, a delay or a lease
// that ended, a nack), then in the order sent, as sqlmailbox does.
//
// Expired leases and ended delays are handled lazily, with no background
// goroutine: Receive, Delete, ChangeVisibility and Stats first sweep what is
// due, in time order, from min-heaps of deadlines, so a call costs
// O(log n) per message it touches, never a scan of the messages in flight.
// A long-polling Receive waits in its caller's goroutine, on one timer and a
// wake-up channel.
//
// Under testing/synctest, create the Broker inside the bubble: its channels
// then belong to the bubble, and a long poll advances virtual time.
//
// The package passes the conformance suite of package mailboxtest, in
// virtual time, in plain `go test` (conformance_test.go).
package memmailbox
