package visibility

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// Lease is one message attached to an Extender. Its fields are owned by the
// Extender and guarded by its mutex; callers only hand it back to Detach.
type Lease struct {
	msg    *sqsloop.Message
	hb     *heartbeat.Heartbeat
	cancel context.CancelCauseFunc

	deadline time.Time // when the message becomes visible unless extended
	lastExt  time.Time // last successful extension, or the receive
	ceiling  time.Time // receive + the configured ceiling (≤ 12 h)
	due      time.Time // when the extender looks at this lease next

	failures int
	lastErr  error
	final    bool          // the last extension was clamped to the ceiling
	index    int           // position in the heap; -1 when not in it
	sending  chan struct{} // closed when the batch carrying this lease is done
	detached bool
	lost     error
}

// leaseHeap orders leases by due time; it implements container/heap.
type leaseHeap []*Lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *leaseHeap) Push(x any) {
	l := x.(*Lease)
	l.index = len(*h)
	*h = append(*h, l)
}
func (h *leaseHeap) Pop() any {
	old := *h
	n := len(old)
	l := old[n-1]
	old[n-1] = nil
	l.index = -1
	*h = old[:n-1]
	return l
}
