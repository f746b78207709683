package leases

import (
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Current is the lease of the message a handler goroutine runs now: the
// sqsloop.Lease a runtime puts in its handlers' contexts
// (sqsloop.NewLeaseContext), delegating to that message's *Lease. The
// messages of a FIFO group run one after another under one context, so
// their runner moves it along (Set) rather than making a context per
// message. The zero Current holds none. Safe for concurrent use.
type Current struct{ p atomic.Pointer[Lease] }

var _ sqsloop.Lease = (*Current)(nil)

// Set makes l the lease of the message running now (nil: none).
func (c *Current) Set(l *Lease) { c.p.Store(l) }

// Extension is the current lease's (Lease.Extension), or 0 when c holds
// none.
func (c *Current) Extension() time.Duration {
	if l := c.p.Load(); l != nil {
		return l.Extension()
	}
	return 0
}

// SetExtension sets the current lease's extension (Lease.SetExtension).
// It does nothing and returns nil when c holds none.
func (c *Current) SetExtension(d time.Duration) error {
	if l := c.p.Load(); l != nil {
		return l.SetExtension(d)
	}
	return nil
}
