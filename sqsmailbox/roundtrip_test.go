package sqsmailbox

import (
	"sync"
	"testing"
	"time"
)

// The RFC 6298 §2.2–2.3 arithmetic on a known sequence, worked by hand:
//
//	R = 100 ms: SRTT 100,      RTTVAR 50   (R/2), bound 100 + 4·50 = 300
//	R = 200 ms: RTTVAR (3·50 + |100-200|)/4 = 62.5, SRTT (7·100 + 200)/8 = 112.5,
//	            bound 112.5 + 4·62.5 = 362.5
//	R = 100 ms: RTTVAR (3·62.5 + |112.5-100|)/4 = 50, SRTT (7·112.5 + 100)/8 = 110.9375,
//	            bound 110.9375 + 4·50 = 310.9375
func TestRTTEstimatorRFC6298(t *testing.T) {
	var e rttEstimator
	if got := e.rto(); got != time.Second {
		t.Fatalf("bound before any sample = %v, want 1s (RFC 6298 §2.1)", got)
	}
	steps := []struct {
		r, srtt, rttvar, bound time.Duration
	}{
		{100 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond},
		{200 * time.Millisecond, 112500 * time.Microsecond, 62500 * time.Microsecond, 362500 * time.Microsecond},
		{100 * time.Millisecond, 110937500 * time.Nanosecond, 50 * time.Millisecond, 310937500 * time.Nanosecond},
	}
	for i, s := range steps {
		e.sample(s.r)
		if e.srtt != s.srtt || e.rttvar != s.rttvar || e.rto() != s.bound {
			t.Errorf("after sample %d (%v): SRTT, RTTVAR, bound = %v, %v, %v; want %v, %v, %v",
				i+1, s.r, e.srtt, e.rttvar, e.rto(), s.srtt, s.rttvar, s.bound)
		}
	}
}

// Steady round trips shrink RTTVAR until the clock granularity G (1 ms) is
// what the bound keeps above SRTT; there is no lower clamp of 1 s.
func TestRTTEstimatorGranularityNoLowerClamp(t *testing.T) {
	var e rttEstimator
	for range 100 {
		e.sample(10 * time.Millisecond)
	}
	if got, want := e.rto(), 10*time.Millisecond+rttGranularity; got != want {
		t.Errorf("bound after 100 samples of 10ms = %v, want SRTT + G = %v", got, want)
	}
	var z rttEstimator
	z.sample(0)
	if got := z.rto(); got != rttGranularity {
		t.Errorf("bound after a sample of 0 = %v, want G = %v", got, rttGranularity)
	}
}

func TestRTTEstimatorUpperClamp(t *testing.T) {
	var e rttEstimator
	e.sample(100 * time.Second)
	if got := e.rto(); got != rttMaxBound {
		t.Errorf("bound after a 100s sample = %v, want the %v cap", got, rttMaxBound)
	}
}

func TestRTTEstimatorIgnoresNegative(t *testing.T) {
	var e rttEstimator
	e.sample(-time.Second)
	if got := e.rto(); got != time.Second {
		t.Errorf("bound after a negative sample = %v, want the initial 1s", got)
	}
}

func TestRTTEstimatorAllocationFree(t *testing.T) {
	var e rttEstimator
	allocs := testing.AllocsPerRun(100, func() {
		e.sample(20 * time.Millisecond)
		_ = e.rto()
	})
	if allocs != 0 {
		t.Errorf("sample+rto allocate %v times, want 0", allocs)
	}
}

// Run with -race: samples and reads from many goroutines.
func TestRTTEstimatorConcurrent(t *testing.T) {
	var e rttEstimator
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				e.sample(time.Duration(i+j) * time.Millisecond)
				if b := e.rto(); b < rttGranularity || b > rttMaxBound {
					t.Errorf("bound %v out of [G, max]", b)
				}
			}
		})
	}
	wg.Wait()
}
