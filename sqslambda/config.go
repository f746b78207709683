package sqslambda

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/visibility"
)

// Defaults and limits of Config.
const (
	// DefaultConcurrency is how many records run at once by default: 10,
	// as consumer.Config's handlers.
	DefaultConcurrency = 10
	// MaxConcurrency bounds Config.Concurrency: 10,000, the largest batch
	// an event source mapping hands a function (standard queue; a FIFO
	// queue's batch holds at most 10).
	MaxConcurrency = 10_000
	// DefaultDeadlineMargin is Config.DeadlineMargin's default: 1.5 s: a
	// quarter (375 ms) for handlers to return once their contexts end, half
	// (750 ms) for the lease owner's flush of the decided nacks and
	// give-backs, a quarter (375 ms) for the answer to reach Lambda.
	DefaultDeadlineMargin = 1500 * time.Millisecond
	// maxFunctionTimeout is Lambda's longest function timeout, 15 minutes:
	// it bounds DeadlineMargin and Invoke's timeout.
	maxFunctionTimeout = 15 * time.Minute
)

// Config tunes a Handler. The zero Config is valid: 10 records at once, a
// 1.5 s deadline margin, FIFO message groups stopped alone on a failure,
// an error when every record of a batch failed, no SQS client (so no extension, no back-off and no dead-letter queue for
// sqsloop.Permanent failures: a failed record comes back after the
// queue's visibility timeout), consumer.Config's back-off.
type Config struct {
	// Concurrency is how many records run at once in one invocation,
	// 1–10,000 (MaxConcurrency); 0 means DefaultConcurrency (10). On a
	// FIFO queue at most one record per message group runs at a time.
	Concurrency int

	// DeadlineMargin is how much of each invocation Handle keeps for
	// itself, counted back from the invocation's deadline (ctx.Deadline):
	// from then on no record starts (those left are reported failed and,
	// with a client, given back at once), the handlers' contexts end
	// (their deadline, and cause ErrDeadline), and DeadlineMargin/4 later
	// Handle stops waiting for handlers that ignore their context (their
	// records are reported failed, see Stats.Abandoned) and stops the
	// lease owner, which sends the decided nacks and give-backs until
	// DeadlineMargin/4 before the deadline (what is unsent then is counted
	// in Stats.NackFailed: those records come back at the end of their
	// leases). Handle answers then at the latest, leaving the last quarter
	// of the margin for the answer to reach Lambda, so that a slow batch,
	// or a slow SQS, does not time the invocation out as a whole, which
	// would make Lambda retry every record of it. That holds as long as
	// the client's calls return when their context ends (sqsmailbox's do)
	// and the answer takes less than DeadlineMargin/4 to leave: keep the
	// margin well above a few milliseconds. Range 0–15 min; 0 means
	// DefaultDeadlineMargin (1.5 s). It is cut to half of an invocation's
	// time when the function timeout is shorter than twice the margin, so
	// that records still run (a 2 s function: 1 s).
	DeadlineMargin time.Duration

	// FIFOStopOnFailure makes the first failure on a FIFO queue stop the
	// whole batch: every record not started yet is reported failed without
	// running, whatever its message group, as AWS's Lambda guide prescribes
	// for FIFO queues with ReportBatchItemFailures ("stop processing
	// messages after the first failure") and Powertools for AWS Lambda's
	// SqsFifoPartialProcessor does by default.
	//
	// Our default (false) differs: only the rest of the failed record's
	// message group is reported failed without running (Powertools'
	// skipGroupOnError option), and the other groups go on. SQS keeps
	// order within a message group only, so the other groups lose no order
	// by running; stopping them would send each of their records back for
	// nothing: one receive more towards the queue's maxReceiveCount and,
	// without a client, a wait of the visibility timeout. A consumer does
	// the same. Set it to follow the guide to the letter.
	FIFOStopOnFailure bool

	// NoErrorWhenAllFail makes Handle return nil, with its response, when
	// every record of a batch is reported failed for its handlers' failures
	// (errors, panics, and the records of their FIFO groups not run after
	// them). By default (false) Handle then also returns an error wrapping
	// ErrAllFailed, as Powertools for
	// AWS Lambda's batch processors do by default (BatchProcessingError,
	// FullBatchFailureError): a batch that fails whole then counts in the
	// function's Errors metric and alarms, where a response listing every
	// record would show as a success, and Powertools documents that Lambda
	// then scales the event source mapping's concurrency down, so that an
	// outage downstream is not met at full concurrency. The records come
	// back either way (with a client, after their back-off; an invocation
	// error changes no visibility). Not when the deadline cut records short
	// or off (a WARN says so; the response lists them): that is time, not
	// the handlers. Set it, as Powertools' own option
	// (raise_on_entire_batch_failure, throwOnFullBatchFailure), when
	// batches are small, a batch of one failed record being an invocation
	// error, or failures are part of the flow.
	NoErrorWhenAllFail bool

	// OpenQueue, if set, gives the SQS client for the queue at queueURL
	// (derived from the records' eventSourceARN, see QueueURL), usually
	// sqsmailbox.New(client, queueURL) over an *sqs.Client. It is called
	// once per queue and execution environment, at the first invocation
	// with records of that queue, followed by one GetQueueAttributes call
	// that checks the queue (see the package doc). With a client the lease
	// owner (see package visibility) extends the visibility of records whose
	// handlers beat, makes a failed record visible again after Backoff, and
	// gives back at once the records that were not run; it runs only while
	// an invocation runs. A record whose handler fails with
	// sqsloop.Permanent is copied to the queue's dead-letter queue, when
	// the client can name it (sqsloop.DeadLetterQueueOpener), and reported
	// processed (see the package doc). Without a client (nil, an error, or
	// a queue that cannot be read) none of this happens: a failed, skipped
	// or permanently failed record comes back after the queue's visibility
	// timeout, and a long record must finish within it. The function's
	// role then needs sqs:ChangeMessageVisibility and
	// sqs:GetQueueAttributes on the queue, and for the dead-letter queue
	// sqs:GetQueueUrl and sqs:SendMessage on it.
	OpenQueue func(queueURL string) (Queue, error)

	// Visibility tunes the lease owner as in consumer.Config: extension
	// (heartbeat-gated unless FixedInterval), CancelOnLeaseLost, OnLeaseLost,
	// Observer (Config.Observer when nil). Left zero, Interval is a fifth
	// of the queue's visibility timeout and the extension is chosen from
	// the beats seen, starting from that timeout, across invocations (see
	// visibility.Config); the rules that depend on the queue's visibility timeout
	// (see visibility.Config) are checked at the first
	// invocation, and a Visibility that breaks them leaves the records
	// without a client (logged at ERROR). Used only with OpenQueue.
	Visibility visibility.Config

	// Backoff gives a failed record's retry delay from its approximate
	// receive count, unless its error carries one (sqsloop.NackAfter),
	// exactly as in the consumer; used only with OpenQueue. Default
	// sqsloop.ExponentialBackoff(1 s, 5 min).
	Backoff func(receiveCount int) time.Duration

	// Middleware wraps the handler as in the consumer, Middleware[0]
	// outermost, inside the consumer's panic recovery.
	Middleware []sqsloop.Middleware

	// Logger receives the handler's and the lease owner's records (message
	// IDs only, never receipt handles). Default slog.Default().
	Logger *slog.Logger

	// Observer, if set, receives the events of the records' handler runs
	// as a consumer reports them (sqsloop.Observer): ProcessStart before a
	// record's handler runs, which then runs with the context it returns,
	// and one ProcessEnd after, with the consumer's outcome
	// (sqsloop.ProcessEvent): acked, nacked or panicked with the retry
	// delay, dead_lettered when it failed with sqsloop.Permanent and its
	// copy is in the dead-letter queue, lease_lost when the lease was lost
	// while it ran, given_back when it returned an error after the deadline
	// cut it short, abandoned when Handle stopped waiting for it (at the
	// latest before Handle returns). With a client it is also the lease
	// owner's, unless Visibility.Observer is set: Settled for every batch
	// call (extensions, nacks, give-backs) and LeaseLost.
	//
	// Records that never run (the rest of a failed FIFO group, those left
	// at the cut-off, one whose lease lapsed while it waited or before the
	// invocation began, which LeaseLost reports) are no handler runs and have no ProcessStart or
	// ProcessEnd, as a consumer's unstarted messages have none: with a
	// client their give-back is a Settled entry (sqsloop.KindGiveBack);
	// Stats.Skipped and Stats.CutOff count them. Received and Drain are
	// never called: the event source mapping receives, and an invocation
	// has no drain. Package otelsqsloop makes OpenTelemetry spans and
	// metrics of the events, package leasepage a page of the records in
	// flight. Nil (the default) costs nothing.
	Observer sqsloop.Observer
}

func (c Config) withDefaults() Config {
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.DeadlineMargin == 0 {
		c.DeadlineMargin = DefaultDeadlineMargin
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Backoff == nil {
		c.Backoff = sqsloop.ExponentialBackoff(0, 0)
	}
	if c.Visibility.Observer == nil {
		c.Visibility.Observer = c.Observer
	}
	return c
}

// Validate reports every problem with c (zero fields taking their
// defaults), joined with errors.Join; each names its field and its allowed
// range and wraps sqsloop.ErrInvalidArgument (errors.Is). Visibility is
// checked as far as it can be before the queue's visibility timeout is
// known (a zero Interval is derived from it); the rest is checked at the
// first invocation. It returns nil for a valid Config.
func (c Config) Validate() error {
	d := c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if d.Concurrency < 1 || d.Concurrency > MaxConcurrency {
		bad("Concurrency: must be between 1 and %d, got %d", MaxConcurrency, d.Concurrency)
	}
	if d.DeadlineMargin < 0 || d.DeadlineMargin > maxFunctionTimeout {
		bad("DeadlineMargin: must be between 0 and 15m (Lambda's longest timeout), got %v", d.DeadlineMargin)
	}
	for i, mw := range d.Middleware {
		if mw == nil {
			bad("Middleware[%d]: must not be nil", i)
		}
	}
	if err := leases.ValidateAnyTimeout(d.Visibility); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() { // errors.Join's
			errs = append(errs, fmt.Errorf("Visibility.%w", e))
		}
	}
	return errors.Join(errs...)
}
