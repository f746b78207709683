package sqsloop

import (
	"context"
	"time"
)

// Lease is what a runtime tells a handler about its message's lease
// through the handler's context (LeaseFromContext): the lease owner of a
// consumer, or of sqslambda with an SQS client, keeps the message hidden
// while its handler beats, extending it by Extension at a time.
//
// Extension is how long each extension of this lease asks for now: the
// lease owner's choice for this lease (see visibility.Config), or what
// SetExtension set. It may change while the handler runs (an adaptive
// choice, a SetExtension call), so read it when it is needed. It is the
// length a middleware that holds something for as long as the lease holds
// (an idempotency claim, a checkpoint) must use: the lease of a handler
// that beats lasts at least that long after its latest extension.
//
// SetExtension makes every later extension of this lease ask for d: for a
// handler that knows its beats come far apart (a job that beats every
// 5 min sets about 6 min). It takes effect at the lease's next extension,
// which a beat earns: beat after setting it. A handler that stops beating
// then keeps its message for up to d + visibility.Config.Interval after
// its last beat. d must be within visibility.Config's MinExtensionPeriod
// and MaxExtensionPeriod (by default three Intervals and an hour, or the
// visibility timeout when longer); otherwise SetExtension changes nothing
// and returns an error naming the range and wrapping ErrInvalidArgument.
// It has no effect with extension disabled.
//
// Implementations are safe for concurrent use, from any goroutine of the
// handler. The runtimes implement it; a test of a handler may implement
// it (NewLeaseContext) to see what the handler asks for.
type Lease interface {
	Extension() time.Duration
	SetExtension(d time.Duration) error
}

// leaseKey is zero-sized, so converting it to an interface does not
// allocate.
type leaseKey struct{}

// NewLeaseContext returns a copy of ctx that carries l, for
// LeaseFromContext: the runtimes call it for each handler run under a
// lease owner; a test may, to run a handler under a lease of its own.
func NewLeaseContext(ctx context.Context, l Lease) context.Context {
	return context.WithValue(ctx, leaseKey{}, l)
}

// LeaseFromContext returns the Lease of the message ctx's handler runs
// for, or nil when ctx carries none: a handler run without a lease owner
// (a test, a Lambda function without an SQS client).
func LeaseFromContext(ctx context.Context) Lease {
	l, _ := ctx.Value(leaseKey{}).(Lease)
	return l
}

// SetExtension sets the extension of the lease of the message ctx's
// handler runs for (Lease.SetExtension, which says what d may be and the
// error it returns). It does nothing and returns nil when ctx carries no
// lease (LeaseFromContext is nil). Safe for concurrent use.
func SetExtension(ctx context.Context, d time.Duration) error {
	if l := LeaseFromContext(ctx); l != nil {
		return l.SetExtension(d)
	}
	return nil
}
