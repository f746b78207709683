// Package producer sends messages to any [sqsloop.Mailbox] in batches.
//
// To send many messages, give them all at once: SendAll (SendAllJSON for
// typed bodies) puts them in SendMessageBatch calls of up to 10 entries and
// 1 MiB in all (SQS's limits: sqsloop.MaxBatchSize, sqsloop.MaxMessageSize),
// several calls on the wire at once (Config.MaxCalls, 8), and returns each
// message's result:
//
//	results, err := p.SendAll(ctx, msgs) // 500 messages: 50 calls
//
// To a Mailbox that can store many messages in one call
// (sqsloop.BulkSender: sqlmailbox's, one statement and one commit on a
// database), whatever is ready once more than one batch of 10 is goes in
// one SendBulk call instead, up to 1,000 messages and 16 MiB
// (sqsloop.MaxBulkSize, MaxBulkBytes): a backlog costs a commit per
// thousand messages, not per ten. Fewer go through Send.
//
// Send and Enqueue from many goroutines (a server's request handlers, each
// sending one) are coalesced the same way, within a short linger window
// (Config.Linger, 5 ms; while calls are on the wire, until all have
// returned and their senders have had a linger to add theirs, 10 lingers
// at most). But Send waits for its own message: in a loop in one goroutine
// each message waits for the one before, one call and one round trip each.
// Measured on fauxqs (an SQS emulator) on a 2-core machine, 500
// messages of one goroutine: Send in a loop made 500 calls in 3.7–4.3 s,
// SendAll 50 calls in 32–58 ms; with every call held 10 ms longer, 8.8–9.1
// s against 98–108 ms. Enqueue returns at once with a Pending to Wait on,
// for a loop that does something between sends.
//
// Every message is sent or its Send returns an error; none is dropped
// silently:
//
//   - an entry that a batch call failed transiently (per entry, or the whole
//     call: throttling, a network error, an answer lost) is retried with
//     back-off, in a later batch, up to Config.MaxAttempts attempts;
//   - a permanent failure (sqsloop.ErrInvalidArgument, ErrAccessDenied,
//     ErrQueueNotFound, ErrMailboxClosed) is returned at once; a whole call
//     refused as malformed (a server with a smaller batch limit) is split
//     into calls of one entry first;
//   - each Send returns its own result: the message ID and, on a FIFO queue,
//     the sequence number.
//
// A whole call that failed after the queue applied it (the answer lost) is
// retried like any other, so the queue may hold such a message twice (SQS's
// own at-least-once; on a FIFO queue deduplication drops the copy within 5
// minutes). The producer itself never sends a message again once a call
// reported it sent.
//
// Order: messages with a MessageGroupID on a FIFO queue keep their order
// per message group across retries, because a group has at most one message
// on the wire at a time (the next waits until the one before is sent or
// has failed for good): a group's messages go at most one per round trip,
// while batches mix groups. A message of a group that ends unsent (failed
// for good, out of attempts, withdrawn) pauses its group: the messages
// behind it, and every later one, fail with ErrGroupPaused until
// ResumeGroup, so that none arrives after a gap. On a standard queue (a
// MessageGroupID there names a fair-queue tenant, with no order) messages
// are not held back; the producer asks the queue its type once
// (sqsloop.AttributesReader, under the first grouped Enqueue's context and
// for at most 5 s), and keeps group order when it cannot tell.
//
// Memory is bounded: at most Config.MaxPendingMessages messages and
// Config.MaxPendingBytes bytes are accepted and not yet sent or failed;
// beyond that Send waits (back-pressure) until there is room or its context
// ends. A message withdrawn when its context ends gives back its room and
// lets go of its body at once, even while every call is busy.
//
// Config.BeforeSend lets instrumentation set message attributes (a trace
// context) before a message is accepted; package otelsqsloop injects
// traceparent through it.
//
// Close(ctx) stops intake, flushes what is pending (retrying as usual) and
// waits; when ctx ends first, what is still unsent fails with ErrClosed and
// Close reports how many. Typed bodies: JSONBody and SendJSON encode a value as
// the body; consumer.JSONHandler decodes it on the other side.
package producer
