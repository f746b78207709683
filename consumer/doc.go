// Package consumer runs the receive loop: it long-polls a sqsloop.Mailbox,
// hands each message to a bounded pool of handlers, keeps the leases of
// messages whose handlers beat (through package visibility), acks and nacks
// in batches, and drains on shutdown so that nothing is lost.
//
// One message, start to end:
//
//  1. Run long-polls Receive for at most as many messages as it has free
//     handler slots (never more than 10, SQS's limit): a message waiting in
//     a local buffer is a lease burning.
//  2. Each message gets a fresh heartbeat.Heartbeat in its handler's context;
//     the handler, and anything it calls, beats with heartbeat.Beat(ctx).
//  3. The lease extender keeps the message hidden while its handler beats.
//  4. The handler returns nil: the lease is detached, then the message is
//     acked (DeleteMessageBatch, coalesced). It returns an error or panics:
//     detach, then nack with the retry back-off; after the queue's
//     maxReceiveCount SQS moves the message to the dead-letter queue.
//  5. Shutdown (Run's context cancelled, or Shutdown called): receiving
//     stops and Ready reports it; messages received but not started
//     (including FIFO messages waiting behind a running one of their group)
//     are nacked at once (visibility 0); in-flight handlers finish while the
//     extender keeps their leases, up to Config.ShutdownTimeout; then their
//     contexts are cancelled, their messages nacked, and Run returns.
//
// On a FIFO queue, messages of one message group run one after another on
// one handler goroutine, in the order SQS delivered them; if one fails, the
// rest of the group is given back unprocessed, so order holds.
//
// Delivery is at least once: a handler must tolerate seeing a message twice.
package consumer
