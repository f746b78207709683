package sqslambda

import "errors"

var (
	// ErrAllFailed is wrapped by the error Handle returns, with
	// Config.ErrorWhenAllFail, when every record of a batch is reported
	// failed (see Config.ErrorWhenAllFail for why that matters).
	ErrAllFailed = errors.New("sqslambda: every record of the batch failed")

	// ErrDeadline is the cause (context.Cause) of a handler's context that
	// ended because the invocation neared its deadline: Config.DeadlineMargin
	// before it. A record whose handler returns after that is given back,
	// not failed with a back-off: it was cut short, not wrong.
	ErrDeadline = errors.New("sqslambda: invocation deadline near")
)
