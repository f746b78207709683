package wire

import (
	"maps"
	"slices"
	"sync"
)

// SQS actions the benchmark reports by name (the operation names of the SQS
// API, as in X-Amz-Target "AmazonSQS.<Action>").
const (
	ReceiveMessage               = "ReceiveMessage"
	DeleteMessage                = "DeleteMessage"
	DeleteMessageBatch           = "DeleteMessageBatch"
	ChangeMessageVisibility      = "ChangeMessageVisibility"
	ChangeMessageVisibilityBatch = "ChangeMessageVisibilityBatch"
)

// ConsumerActions are the actions a consumer makes, in report order.
var ConsumerActions = []string{
	ReceiveMessage, DeleteMessage, DeleteMessageBatch,
	ChangeMessageVisibility, ChangeMessageVisibilityBatch,
}

// Counts is a snapshot of requests by action name.
type Counts map[string]int64

// Total returns the sum over every action.
func (c Counts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// Sub returns c minus before, action by action (a snapshot taken earlier
// from the same Counter), keeping only non-zero differences.
func (c Counts) Sub(before Counts) Counts {
	out := Counts{}
	for k, v := range c {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	for k, v := range before {
		if _, ok := c[k]; !ok && v != 0 {
			out[k] = -v
		}
	}
	return out
}

// Equal reports whether c and o hold the same non-zero counts.
func (c Counts) Equal(o Counts) bool {
	return len(c.Sub(o)) == 0
}

// Actions returns the action names with a non-zero count, sorted.
func (c Counts) Actions() []string {
	return slices.Sorted(maps.Keys(c.Sub(nil)))
}

// Counter counts events by name. The zero value is ready to use; it is safe
// for concurrent use.
type Counter struct {
	mu sync.Mutex
	n  map[string]int64
}

// Add counts one event named name.
func (c *Counter) Add(name string) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[name]++
	c.mu.Unlock()
}

// Snapshot returns a copy of the counts so far.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Counts(maps.Clone(c.n)).Sub(nil)
}
