package main

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// bodyPrefix starts every preloaded body; the rest is the message's index.
const bodyPrefix = "m-"

func body(i int) string { return bodyPrefix + strconv.Itoa(i) }

// delivery is what a handler is given of one received message, whatever
// the implementation.
type delivery struct {
	body          string
	receiptHandle string
	// receiveCount is the message's ApproximateReceiveCount, including
	// this receive (0 when the receive did not report it).
	receiveCount int
}

// receiveCountOf reads ApproximateReceiveCount from SQS system attributes
// (0 when absent or not a number).
func receiveCountOf(attrs map[string]string) int {
	n, _ := strconv.Atoi(attrs["ApproximateReceiveCount"])
	return n
}

// tracker records, by message index (read from the body), how often each
// message was handled and whether one handling completed, and the largest
// receive count a handler saw. It closes done when every message has
// completed once. With a timeline (two workers) it also records every
// handler run and each worker's running handlers over time. Safe for
// concurrent use.
type tracker struct {
	starts          []atomic.Int32
	completed       []atomic.Bool
	left            atomic.Int64
	unknown         atomic.Int64
	maxReceiveCount atomic.Int64
	done            chan struct{}
	closeOnce       sync.Once
	doneAt          atomic.Int64 // UnixNano when done closed
	tl              *timeline    // nil: none kept
}

func newTracker(n int) *tracker {
	t := &tracker{starts: make([]atomic.Int32, n), completed: make([]atomic.Bool, n), done: make(chan struct{})}
	t.left.Store(int64(n))
	if n == 0 {
		close(t.done)
	}
	return t
}

// begin records that a handler of worker w started on d and returns the
// message's index, or -1 for a body that is not one of ours.
func (t *tracker) begin(w int, d delivery) int {
	for {
		m := t.maxReceiveCount.Load()
		if int64(d.receiveCount) <= m || t.maxReceiveCount.CompareAndSwap(m, int64(d.receiveCount)) {
			break
		}
	}
	i := t.index(d.body)
	if i >= 0 {
		t.starts[i].Add(1)
	}
	if t.tl != nil {
		t.tl.begin(w, i, d.receiptHandle, time.Now())
	}
	return i
}

// end records that a handler of worker w on message i (from begin)
// returned; completed says whether it completed the message.
func (t *tracker) end(w, i int, completed bool) {
	if t.tl != nil {
		t.tl.end(w, time.Now())
	}
	if completed {
		t.finish(i)
	}
}

// index reads the message index from body b, counting b as unknown and
// returning -1 when it is not one of ours.
func (t *tracker) index(b string) int {
	i, err := strconv.Atoi(strings.TrimPrefix(b, bodyPrefix))
	if err != nil || !strings.HasPrefix(b, bodyPrefix) || i < 0 || i >= len(t.starts) {
		t.unknown.Add(1)
		return -1
	}
	return i
}

// finish records that a handling of message i completed.
func (t *tracker) finish(i int) {
	if i < 0 || !t.completed[i].CompareAndSwap(false, true) {
		return
	}
	if t.left.Add(-1) == 0 {
		t.closeOnce.Do(func() {
			t.doneAt.Store(time.Now().UnixNano())
			close(t.done)
		})
	}
}

// result counts: handlings in all, distinct messages handled, and
// duplicates (handlings beyond the first of each message).
func (t *tracker) counts() (handled, distinct, duplicates int64) {
	for i := range t.starts {
		n := int64(t.starts[i].Load())
		handled += n
		if n > 0 {
			distinct++
			duplicates += n - 1
		}
	}
	return handled, distinct, duplicates
}

// completedCount is how many distinct messages completed a handling.
func (t *tracker) completedCount() int64 { return int64(len(t.starts)) - t.left.Load() }

// doneTime is when every message had been handled once (zero if not yet).
func (t *tracker) doneTime() time.Time {
	at := t.doneAt.Load()
	if at == 0 {
		return time.Time{}
	}
	return time.Unix(0, at)
}

// doneSince returns how long after t0 every message had been handled once,
// or 0 if they have not.
func (t *tracker) doneSince(t0 time.Time) time.Duration {
	at := t.doneTime()
	if at.IsZero() {
		return 0
	}
	return at.Sub(t0)
}
