package sqlmailbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// statements records the statements a together ran: the inputs of each.
type statements struct {
	mu  sync.Mutex
	ran [][]int
}

// run is a statement of 1 ms that doubles each input, or fails for an
// input of -1, or waits for its context for an input of -2.
func (s *statements) run(ctx context.Context, ins []int) ([]int, error) {
	s.mu.Lock()
	s.ran = append(s.ran, slices.Clone(ins))
	s.mu.Unlock()
	if slices.Contains(ins, -2) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	time.Sleep(time.Millisecond)
	if slices.Contains(ins, -1) {
		return nil, errors.New("statement failed")
	}
	outs := make([]int, len(ins))
	for i, in := range ins {
		outs[i] = 2 * in
	}
	return outs, nil
}

// A call that comes while none is on the wire runs alone and at once;
// those that come while one is go together in the next statement, up to
// maxTogether entries, each with its own result.
func TestTogetherRunsTheCallsThatWaitInOneStatement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tg together[int, int]
		var s statements
		var wg sync.WaitGroup
		got := make([]int, 13)
		wg.Go(func() { got[0], _ = tg.do(t.Context(), 0, 10, s.run) })
		synctest.Wait() // the first is on the wire
		for i := 1; i < len(got); i++ {
			wg.Go(func() {
				var err error
				if got[i], err = tg.do(t.Context(), i, 10, s.run); err != nil {
					t.Error(err)
				}
			})
			synctest.Wait() // in this order
		}
		wg.Wait()
		for i, g := range got {
			if g != 2*i {
				t.Errorf("call %d got %d, want %d", i, g, 2*i)
			}
		}
		if want := "[[0] [1 2 3 4 5 6 7 8 9 10] [11 12]]"; fmt.Sprint(s.ran) != want {
			t.Errorf("statements %v, want %s: one alone, then the ten that waited (100 entries), then the rest", s.ran, want)
		}
	})
}

// A statement's error is every call's in it; a call whose context ends
// while it waits is withdrawn; when the call running a statement gives up
// (its context ends), the others in it run again, in another statement.
func TestTogetherErrorsAndGivingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tg together[int, int]
		var s statements
		var wg sync.WaitGroup
		var errs [4]error
		var got [4]int
		start := func(i int, ctx context.Context, in int) {
			wg.Go(func() { got[i], errs[i] = tg.do(ctx, in, 1, s.run) })
			synctest.Wait()
		}
		start(0, t.Context(), 3) // on the wire: the next two wait, and go together
		start(1, t.Context(), -1)
		start(2, t.Context(), 1)
		wg.Wait()
		if errs[0] != nil || errs[1] == nil || errs[2] == nil || errs[1] != errs[2] {
			t.Fatalf("a failed statement of two: %v, %v; want its error for both", errs[1], errs[2])
		}

		leader, cancelLeader := context.WithCancel(t.Context())
		waiter, cancelWaiter := context.WithCancel(t.Context())
		start(0, t.Context(), 3) // on the wire: the next two wait, and go together
		start(1, leader, -2)
		start(2, t.Context(), 9)
		time.Sleep(time.Millisecond) // 3 is done: -2 runs for itself and 9, until its context ends
		synctest.Wait()
		start(3, waiter, 5) // waits behind them
		cancelWaiter()
		synctest.Wait()
		cancelLeader()
		wg.Wait()
		if !errors.Is(errs[1], context.Canceled) || !errors.Is(errs[3], context.Canceled) || errs[2] != nil || got[2] != 18 {
			t.Fatalf("the runner %v, the withdrawn %v, the one left behind %d, %v; want the two canceled and 18 for the third",
				errs[1], errs[3], got[2], errs[2])
		}
		if want := "[[3] [-1 1] [3] [-2 9] [9]]"; fmt.Sprint(s.ran) != want {
			t.Errorf("statements %v, want %s: 9 again after -2 gave up, the withdrawn call in none", s.ran, want)
		}
	})
}
