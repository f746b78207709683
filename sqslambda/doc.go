// Package sqslambda runs a sqsloop.Handler on AWS Lambda, behind an SQS
// event source mapping: the same handler, with the same middleware, in a
// long-running consumer or in a function.
//
//	h, err := sqslambda.New(handler, sqslambda.Config{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	lambda.Start(h.Handle) // github.com/aws/aws-lambda-go/lambda
//
// # What the handler sees
//
// Each record becomes a *sqsloop.Message with the fields sqsmailbox fills
// (ID, body, message attributes with their string and binary values, the
// sqsloop.Attr… system attributes, AWSTraceHeader among them, receive
// count, message group, sent and first-received times, receipt handle),
// and its context carries a heartbeat (heartbeat.Beat) and the invocation's
// values (lambdacontext). Its context ends Config.DeadlineMargin before the
// invocation's deadline, with cause ErrDeadline. VisibilityTimeout is the
// queue's with a client, 0 without (the event does not tell); ReceivedAt is
// explained below.
//
// # The partial batch response
//
// Handle answers with batchItemFailures: the message IDs of the records
// that failed (an error or a recovered panic), that were not run, or that
// were still running when Handle stopped waiting, each once. The others
// were processed and the event source mapping deletes them; it must have
// ReportBatchItemFailures in its FunctionResponseTypes, or it ignores the
// list and deletes failed records too. An empty or unknown itemIdentifier
// would fail the whole batch, so only IDs of the event are ever listed, and
// a record without one fails the invocation before anything runs.
// When every record failed Handle also returns an error (ErrAllFailed), as
// Powertools' batch processors do, so that the function's Errors metric
// shows it (Config.NoErrorWhenAllFail turns that off).
//
// # Concurrency and FIFO queues
//
// Records run concurrently, at most Config.Concurrency at once (a standard
// queue's batch holds up to 10,000 records). On a FIFO queue the records of
// one message group run one after another, in the event's order; after a
// failure the rest of the group is reported failed without running, while
// the other groups go on (order holds within a group only); with
// Config.FIFOStopOnFailure every record of the batch not started yet is,
// as AWS's Lambda guide prescribes (see it for why ours differs).
//
// # Time
//
// Lambda stops an invocation at its deadline and then retries every record
// of the batch, done or not. So Handle keeps Config.DeadlineMargin (1.5 s
// by default) of each invocation for itself: from DeadlineMargin before the
// deadline no record starts (the rest are reported failed), the handlers'
// contexts end, and a quarter of the margin later Handle stops waiting for
// handlers that ignore their context (their records are reported failed;
// their goroutines are left behind, frozen with the execution environment,
// as the consumer's drain abandons them) and stops the lease owner, which
// sends what was decided until a quarter of the margin before the
// deadline, when Handle answers at the latest.
//
// # With an SQS client: leases and back-off
//
// With Config.OpenQueue, each invocation runs a lease owner (the
// consumer's, see package visibility) over the queue's receipt handles
// while Handle runs, as the consumer does for the messages it receives: a
// record whose handler beats keeps its message hidden past the queue's
// visibility timeout (ChangeMessageVisibilityBatch, batched for the whole
// batch), one that
// stops beating loses its lease (its context is cancelled with
// Visibility.CancelOnLeaseLost), a failed record is made visible again
// after Backoff(receive count) (or sqsloop.NackAfter's delay), and a
// record that was not run, or was cut short by the deadline, is given back
// at once. A processed record's lease is released: the event source mapping
// deletes it. The lease owner stops, after sending what was decided (up to
// a quarter of the margin before the deadline), before Handle returns: nothing of it runs between invocations, when Lambda
// freezes the environment.
//
// Without a client none of this happens: a failed or unstarted record
// becomes visible again when the queue's visibility timeout, counted from
// the event source mapping's receive, ends, and a record must finish
// within it.
//
// Lease deadlines count from Message.ReceivedAt: the invocation's start,
// or a first delivery's ApproximateFirstReceiveTimestamp when earlier. The
// event does not say when a redelivered record was received, which a
// batching window or a throttled invocation puts before the invocation. A
// record received a visibility timeout or more before the invocation began
// (a throttled invocation, or an old event replayed, such as AWS's sample
// events) has lost its lease already: it is not run and is reported failed,
// with a WARN saying so and a LeaseLost of reason sqsloop.LostBeforeStart.
//
// # Poison messages
//
// With a client that can name the queue's dead-letter queue
// (sqsloop.DeadLetterQueueOpener, as *sqsmailbox.Mailbox and
// *memmailbox.Queue can), a record whose handler fails with
// sqsloop.Permanent (and every body consumer.JSONHandler cannot decode) goes to
// the dead-letter queue at once, as under a consumer, instead of being
// retried until the queue's maxReceiveCount: the consumer's copy
// (its body, its message attributes and the
// sqsloop.AttrPoison… attributes saying why, which message, after how
// many receives; on a FIFO queue its message group and deduplication ID)
// is sent to the dead-letter queue, and then the record is reported
// processed, so the event source mapping deletes the original. The copy is
// sent before Handle answers: a crash in between leaves the message in the
// source queue (redelivered) or in both, never in neither. On a FIFO queue
// the rest of the record's message group goes on, as under a consumer,
// which acks it; with Config.FIFOStopOnFailure too.
//
// The copy must be done by the time Handle stops waiting for handlers
// (DeadlineMargin/4 after the cut-off; and within 10 s): one that would
// run past it is cut off there (its context ends), the record fails, and
// Handle answers within the margin as usual. A permanent failure is a
// failure like any other (reported in batchItemFailures, nacked with its back-off), with a
// WARN naming the queue and the reason, whenever there is no copy: no
// client in this invocation, no redrive policy, a client that cannot name
// its dead-letter queue, or a copy that failed. The dead-letter queue is
// opened at the first such record of an execution environment
// (GetQueueAttributes and GetQueueUrl with sqsmailbox), and kept; the
// function's role needs sqs:GetQueueUrl and sqs:SendMessage on it.
//
// # Observing it
//
// Config.Observer receives what a consumer reports for the same things
// (sqsloop.Observer): a ProcessStart and a ProcessEnd for each record run,
// with the consumer's outcomes, and, with a client, the lease owner's
// batch calls and lost leases. Package otelsqsloop makes of them the same
// process spans (linked to each record's producer, from its traceparent
// message attribute or its AWSTraceHeader), settle spans and metrics as
// for a consumer, and package leasepage a page of the records in flight.
// No receive is reported (the event source mapping receives), nor a drain;
// records never run are no handler runs (see Config.Observer).
//
// # Checks at the cold start
//
// With a client, the first invocation with records of a queue reads the
// queue's attributes (GetQueueAttributes) and warns when AWS's guidance is
// not met: a visibility timeout below 6× the function timeout (read from
// the invocation's deadline), no redrive policy, a maxReceiveCount below 5.
// A denied or otherwise permanent failure of that call, 3 transient ones in
// a row (each at one invocation, which runs without the client: an SQS that
// cannot be reached is not paid for forever), an OpenQueue error, or
// visibility.MaxAccessDenied (5) denied visibility changes in a row, across
// invocations, is logged at ERROR once and turns the client off until the
// next cold start.
package sqslambda
