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

// tracker records, by message index (read from the body), how often each
// message was handled and whether one handling completed. It closes done
// when every message has completed once. Safe for concurrent use.
type tracker struct {
	starts    []atomic.Int32
	completed []atomic.Bool
	left      atomic.Int64
	unknown   atomic.Int64
	done      chan struct{}
	closeOnce sync.Once
	doneAt    atomic.Int64 // UnixNano when done closed
}

func newTracker(n int) *tracker {
	t := &tracker{starts: make([]atomic.Int32, n), completed: make([]atomic.Bool, n), done: make(chan struct{})}
	t.left.Store(int64(n))
	if n == 0 {
		close(t.done)
	}
	return t
}

// start records a handling of the message with body b and returns its
// index, or -1 for a body that is not one of ours.
func (t *tracker) start(b string) int {
	i, err := strconv.Atoi(strings.TrimPrefix(b, bodyPrefix))
	if err != nil || !strings.HasPrefix(b, bodyPrefix) || i < 0 || i >= len(t.starts) {
		t.unknown.Add(1)
		return -1
	}
	t.starts[i].Add(1)
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

// doneSince returns how long after t0 every message had been handled once,
// or 0 if they have not.
func (t *tracker) doneSince(t0 time.Time) time.Duration {
	at := t.doneAt.Load()
	if at == 0 {
		return 0
	}
	return time.Unix(0, at).Sub(t0)
}
