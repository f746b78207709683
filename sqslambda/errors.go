package sqslambda

import "errors"

var (
	// ErrAllFailed is wrapped by the error Handle returns when every record
	// of a batch is reported failed for its handlers' failures, unless
	// Config.NoErrorWhenAllFail (see it for why that matters).
	ErrAllFailed = errors.New("sqslambda: every record of the batch failed")

	// ErrDeadline is the cause (context.Cause) of a handler's context that
	// ended because the invocation neared its deadline: Config.DeadlineMargin
	// before it. A record whose handler returns after that is given back,
	// not failed with a back-off: it was cut short, not wrong.
	ErrDeadline = errors.New("sqslambda: invocation deadline near")

	// ErrLapsedBeforeStart is the reason (with visibility.ErrLeaseLost) of
	// the lost lease of a record that was received a visibility timeout or
	// more before its invocation began (sqsloop.LostBeforeStart): the
	// record is not run and is reported failed, since its message is
	// visible again, or was received by another invocation, already.
	ErrLapsedBeforeStart = errors.New("sqslambda: the lease had lapsed before the invocation began")
)
