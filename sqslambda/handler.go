package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/failurelog"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// Handler runs a sqsloop.Handler for the records of SQS events: its Handle
// method is the Lambda function's handler. Create it with New, once per
// execution environment (before lambda.Start): it keeps what it learns of
// each queue across invocations. Safe for concurrent use (an execution
// environment of Lambda Managed Instances may run several invocations at
// once).
type Handler struct {
	cfg     Config
	handler sqsloop.Handler // with panic recovery and middleware, as under a consumer (rules.Wrap)

	failures *failurelog.Log // the WARN lines of failed handler runs, rate-limited

	mu     sync.Mutex
	queues map[string]*queueState // by eventSourceARN

	st counters
}

// New returns a Handler that runs h for each record. It returns the errors
// of cfg.Validate (each naming its field and range), and an error wrapping
// sqsloop.ErrInvalidArgument for a nil h. It makes no call: the queue is
// opened and checked at the first invocation.
func New(h sqsloop.Handler, cfg Config) (*Handler, error) {
	var errs []error
	if h == nil {
		errs = append(errs, fmt.Errorf("handler: must not be nil: %w", sqsloop.ErrInvalidArgument))
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cfg = cfg.withDefaults()
	return &Handler{
		cfg:      cfg,
		handler:  rules.Wrap(h, cfg.Logger, cfg.Middleware),
		queues:   make(map[string]*queueState),
		failures: failurelog.New(cfg.Logger, "sqslambda"),
	}, nil
}

// Handle runs the handler for every record of event and returns the
// partial batch response: the message IDs of the records that failed
// (errors and recovered panics), that were not run (the rest of a FIFO
// message group after a failure; records left when the deadline neared)
// or that were still running when Handle stopped waiting, each once, in
// the event's order. Records not listed were processed, and the event
// source mapping deletes them (it must have ReportBatchItemFailures in its
// FunctionResponseTypes, or Lambda deletes the failed records too): those
// whose handler succeeded, and, with a client, those whose handler failed
// with sqsloop.Permanent and whose copy the queue's dead-letter queue
// has (sent before Handle answers; see the package doc).
//
// ctx is the invocation's: its deadline sets the cut-off
// (Config.DeadlineMargin) and its values reach the handlers, whose
// contexts also carry a heartbeat (heartbeat.Beat) as under a consumer.
// Records run concurrently, at most Config.Concurrency at once, one at a
// time per FIFO message group, in the event's order. With a client
// (Config.OpenQueue) the lease owner runs while Handle runs: it extends
// the leases of records whose handlers beat, nacks a failed record with
// its back-off and gives back at once a record that was not run or was
// cut short; it has stopped, and sent what it could (see
// Config.DeadlineMargin), when Handle returns.
//
// The error is nil but for a record without a messageId (the response
// could not name it; an error wrapping sqsloop.ErrInvalidArgument, before
// anything runs, so Lambda retries the whole batch) and, unless
// Config.NoErrorWhenAllFail, a batch whose every record is reported failed
// for its handlers' failures (an error wrapping ErrAllFailed, with the
// response; not when the deadline cut records short or off).
func (h *Handler) Handle(ctx context.Context, event events.SQSEvent) (events.SQSEventResponse, error) {
	start := time.Now()
	h.st.invocations.Add(1)
	for i := range event.Records {
		if event.Records[i].MessageId == "" {
			return events.SQSEventResponse{}, fmt.Errorf("sqslambda: record %d of %d has no messageId, so it cannot be reported alone: %w",
				i, len(event.Records), sqsloop.ErrInvalidArgument)
		}
	}
	if len(event.Records) == 0 {
		return events.SQSEventResponse{}, nil
	}
	b := h.newBatch(ctx, event.Records, start)
	b.run()
	failures, allFailed, firstErr := b.finish()
	h.failures.Flush() // the failures this invocation did not log at WARN, before the environment is frozen
	resp := events.SQSEventResponse{BatchItemFailures: failures}
	if allFailed && !h.cfg.NoErrorWhenAllFail {
		return resp, fmt.Errorf("sqslambda: all %d records of the batch are reported failed (the first handler error: %v): %w",
			len(event.Records), firstErr, ErrAllFailed)
	}
	return resp, nil
}
