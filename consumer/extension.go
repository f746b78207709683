package consumer

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop/internal/leases"
)

// SetExtension sets how long each later extension of the lease of the
// message ctx's handler runs asks for: d, instead of the lease owner's
// choice (see visibility.Config), for a handler that knows its beats come
// far apart (a job that beats every 5 min sets about 6 min). It takes
// effect at the lease's next extension, which a beat earns: beat after
// setting it. A handler that stops beating then keeps its message for up
// to d + Visibility.Interval after its last beat.
//
// d must be within Visibility.MinExtensionPeriod and MaxExtensionPeriod
// (by default three Intervals and an hour, or the visibility timeout when
// longer); otherwise SetExtension changes nothing and returns an error
// naming the range and wrapping sqsloop.ErrInvalidArgument. It does
// nothing and returns nil when ctx is not a handler's context of a
// consumer or of sqslambda with a lease owner (a test's, or a Lambda
// function's without an SQS client), and has no effect with extension
// disabled. Safe for concurrent use, from any goroutine of the handler.
func SetExtension(ctx context.Context, d time.Duration) error {
	return leases.SetExtension(ctx, d)
}
