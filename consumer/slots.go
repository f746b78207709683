package consumer

import "context"

// slots counts free handler slots: a buffered channel holding one token per
// free slot, so taking and giving back slots never allocates, and a select
// can wait for a slot, a timer and a context at once (gather does).
// semaphore.Weighted allocates its waiters and was ~40 % slower in
// BenchmarkSemaphoreSlots than the channel in BenchmarkPoolSubmit.
type slots chan struct{}

func newSlots(n int) slots {
	s := make(slots, n)
	for range n {
		s <- struct{}{}
	}
	return s
}

// acquire takes one slot, waiting until one is free or ctx is done; it
// reports whether it got one.
func (s slots) acquire(ctx context.Context) bool {
	select {
	case <-s:
		return true
	case <-ctx.Done():
		return false
	}
}

// tryAcquire takes one slot if one is free at once.
func (s slots) tryAcquire() bool {
	select {
	case <-s:
		return true
	default:
		return false
	}
}

// release gives back n slots.
func (s slots) release(n int) {
	for range n {
		s <- struct{}{}
	}
}
