// Package consumer runs the receive loop: it long-polls a sqsloop.Mailbox,
// hands each message to a bounded pool of handlers, has the lease owner
// (package visibility) keep the leases of messages whose handlers beat and
// send their acks and nacks in batches, and drains on shutdown so that
// nothing is lost.
//
// One message, start to end:
//
//  1. Run long-polls Receive (up to 10 messages, SQS's limit) for the free
//     handler slots plus a small receive-ahead: the messages the handlers
//     get through in one receive round trip (Little's law on the measured
//     handler time and round trip), so that with fast handlers and a distant
//     queue the next messages are on their way when a handler frees up. With
//     slow handlers the receive-ahead is 0: a long job never waits in this
//     consumer's buffer while another consumer has a free slot.
//  2. The lease owner holds the message from its arrival: while it waits
//     for a handler it is kept alive without beats (for at most one
//     Extension); then its handler beats a fresh heartbeat.Heartbeat carried
//     in its context, with heartbeat.Beat(ctx), and the lease is extended
//     only while it does.
//  3. The handler returns nil: the lease owner acks the message
//     (DeleteMessageBatch, coalesced), retrying a failed delete while it
//     keeps the lease. It returns an error or panics: the lease owner nacks
//     it after the retry back-off; after the queue's maxReceiveCount SQS
//     moves it to the dead-letter queue.
//  4. Shutdown (Run's context cancelled, or Shutdown called): receiving
//     stops and Ready reports it; messages received but not started (in the
//     receive-ahead buffer, or behind a running one of their FIFO group) are
//     given back (visibility 0) as soon as the receive calls in flight are
//     back (within two round trips, at most 250 ms), so that none of them
//     takes one again; in-flight handlers finish while their leases are
//     kept, within the drain budget (Config.ShutdownTimeout, or the
//     deadline of Shutdown's context); then their contexts are cancelled
//     and, after DrainGrace, what they still hold is given back. The acks,
//     nacks and give-backs decided are sent within what is left of the
//     budget (at least 1 s), failed calls tried again meanwhile, and Run
//     returns.
//
// Between the two, Pause puts the consumer in drain mode without exit:
// receiving stops, the handlers finish what was received, and Run goes on,
// not ready, until Resume (lifecycle.LoopGroup.DrainHandler serves it over
// HTTP). For batch jobs, Config.ExitWhenIdle makes Run return nil once the
// queue has been empty, with nothing in flight, for that long.
//
// On a FIFO queue, messages of one message group run one after another on
// one handler goroutine, in the order SQS delivered them; if one fails, the
// rest of the group is given back unprocessed, so order holds. The
// receive-ahead never reorders a group: a group's messages travel together.
//
// A message that can never succeed (a poison message) need not wait for
// maxReceiveCount: a handler that returns sqsloop.Permanent(err) sends it
// to the queue's dead-letter queue at once (a copy saying why, then the
// delete), and JSONHandler's handlers do so for a body that does not
// decode.
//
// # Lease lengths
//
// A zero Config.VisibilityTimeout is the queue's (read at start-up), and
// a zero Visibility.Extension is chosen by the lease owner: a handler that
// beats at least once per visibility timeout never loses its message,
// whatever else runs beside it, and leases are lengthened from the gaps
// between beats observed where slower handlers need it (see
// visibility.Config for the rule, the formula and the trade). A handler
// that knows its beats come far apart says so with
// sqsloop.SetExtension; sqsloop.LeaseFromContext(ctx).Extension() says
// what each extension of its lease asks for now.
//
// # Scaling signal
//
// How many consumers does a queue need? AWS's guidance for a fleet of SQS
// workers compares the backlog per instance with an acceptable backlog per
// instance (the latency target ÷ the time a message takes). A consumer
// with an Observer reads its queue's approximate counts, and its
// dead-letter queue's, every Config.QueueReadInterval (5 s by default;
// when its Mailbox is an sqsloop.AttributesReader), whatever its receives
// do, and reports each read as an sqsloop.QueueEvent, from the first, at
// start-up:
//
//	backlog per consumer = B ÷ N,  N = max(1, round(F ÷ h))
//	recommended          = max(1, ⌈(F + B × T ÷ L) ÷ C⌉)
//
// with B the queue's visible messages (ApproximateNumberOfMessages), F its
// messages in flight (ApproximateNumberOfMessagesNotVisible), h the
// messages this consumer holds (its Concurrency when it holds none), T the
// handlers' run time (a moving average that rises fast and falls slowly),
// L Config.LatencyTarget, and C Config.Concurrency. N counts the consumers
// as their share of the messages in flight: exact while the backlog is not
// empty (every consumer then holds what it can), and the backlog per
// consumer is 0 when it is. The recommended count keeps what is in flight
// running (F ÷ C consumers: by Little's law, the arrival rate × T ÷ C) and
// clears the backlog within L (B × T ÷ L more handlers busy). It assumes
// consumers alike (one Concurrency, one handler) and SQS's counts, which
// are approximate and up to a minute late. Without a LatencyTarget, and
// until a handler has run, T ÷ L is taken as 1: a handler slot per message
// visible or in flight (KEDA's aws-sqs-queue scaler with queueLength C).
// Each read costs one GetQueueAttributes call per queue: 720 an hour per
// queue at 5 s, 1,440 with a dead-letter queue, per consumer (about $0.42
// a month at SQS's $0.40 per million requests). Package otelsqsloop
// exports the counts and the signal as metrics, with the ECS and KEDA
// set-ups that scale on them; package leasepage shows them.
//
// Delivery is at least once: a handler must tolerate seeing a message twice.
package consumer
