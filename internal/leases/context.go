package leases

import (
	"context"
	"sync/atomic"
	"time"
)

// Current is the lease of the message a handler goroutine runs now, which
// consumer.SetExtension reaches through the handler's context. The
// messages of a FIFO group run one after another under one context, so
// their runner moves it along (Set) rather than making a context per
// message. The zero Current holds none. Safe for concurrent use.
type Current struct{ p atomic.Pointer[Lease] }

// Set makes l the lease of the message running now (nil: none).
func (c *Current) Set(l *Lease) { c.p.Store(l) }

// currentKey is zero-sized, so converting it to an interface does not
// allocate.
type currentKey struct{}

// NewContext returns a copy of ctx that carries c.
func NewContext(ctx context.Context, c *Current) context.Context {
	return context.WithValue(ctx, currentKey{}, c)
}

// SetExtension sets the extension of the lease of the message ctx's
// handler runs (Lease.SetExtension). It does nothing and returns nil when
// ctx carries no lease: a handler run without a lease owner (a test, a
// Lambda function without an SQS client).
func SetExtension(ctx context.Context, d time.Duration) error {
	c, _ := ctx.Value(currentKey{}).(*Current)
	if c == nil {
		return nil
	}
	if l := c.p.Load(); l != nil {
		return l.SetExtension(d)
	}
	return nil
}
