package heartbeat_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/heartbeat"
)

func TestNeverBeaten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := heartbeat.New()
		if got := h.Started(); !got.Equal(start) {
			t.Fatalf("Started() = %v, want %v", got, start)
		}
		if got := h.LastBeat(); !got.IsZero() {
			t.Fatalf("LastBeat() = %v, want zero Time", got)
		}
		if got := h.Elapsed(); got != 0 {
			t.Fatalf("Elapsed() at start = %v, want 0", got)
		}
		time.Sleep(7 * time.Second)
		if got := h.Elapsed(); got != 7*time.Second {
			t.Fatalf("Elapsed() 7s after New = %v, want 7s (time since start)", got)
		}
		if got := h.LastBeat(); !got.IsZero() {
			t.Fatalf("LastBeat() = %v, want zero Time", got)
		}
	})
}

func TestBeatThenElapsedGrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heartbeat.New()
		time.Sleep(5 * time.Second)
		h.Beat()
		beatAt := time.Now()
		if got := h.LastBeat(); !got.Equal(beatAt) {
			t.Fatalf("LastBeat() = %v, want %v", got, beatAt)
		}
		if got := h.Elapsed(); got != 0 {
			t.Fatalf("Elapsed() right after a beat = %v, want 0", got)
		}
		time.Sleep(3 * time.Second)
		if got := h.Elapsed(); got != 3*time.Second {
			t.Fatalf("Elapsed() 3s after a beat = %v, want 3s", got)
		}
		if got := h.LastBeat(); !got.Equal(beatAt) {
			t.Fatalf("LastBeat() moved without a beat: %v, want %v", got, beatAt)
		}
		h.Beat()
		time.Sleep(time.Second)
		if got := h.Elapsed(); got != 0 {
			t.Fatalf("Elapsed() after a new beat = %v, want 0 (stamped when observed)", got)
		}
	})
}

// A beat is stamped by its first observer, not when it happened: LastBeat's
// precision is the observer's polling period.
func TestBeatStampedWhenObserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heartbeat.New()
		h.Beat()
		time.Sleep(4 * time.Second)
		observedAt := time.Now()
		if got := h.LastBeat(); !got.Equal(observedAt) {
			t.Fatalf("LastBeat() = %v, want the observation time %v", got, observedAt)
		}
		time.Sleep(2 * time.Second)
		if got, want := h.LastBeat(), observedAt; !got.Equal(want) {
			t.Fatalf("second LastBeat() = %v, want %v (no new beat)", got, want)
		}
	})
}

func TestNilHeartbeat(t *testing.T) {
	var h *heartbeat.Heartbeat
	h.Beat()
	if !h.LastBeat().IsZero() || !h.Started().IsZero() || h.Elapsed() != 0 {
		t.Fatalf("nil Heartbeat: LastBeat=%v Started=%v Elapsed=%v, want zero values", h.LastBeat(), h.Started(), h.Elapsed())
	}
	if id := h.AddCallback(func() {}); id != 0 {
		t.Fatalf("nil Heartbeat: AddCallback = %d, want 0", id)
	}
	if h.RemoveCallback(1) {
		t.Fatal("nil Heartbeat: RemoveCallback = true, want false")
	}
}

// Many beaters and observers at once; run with -race.
func TestConcurrentBeatAndObserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heartbeat.New()
		var calls sync.WaitGroup
		var mu sync.Mutex
		n := 0
		h.AddCallback(func() { mu.Lock(); n++; mu.Unlock() })
		const beaters, beats = 8, 200
		for range beaters {
			calls.Go(func() {
				for range beats {
					h.Beat()
				}
			})
		}
		for range 2 {
			calls.Go(func() {
				prev := time.Time{}
				for range beats {
					got := h.LastBeat()
					if got.Before(prev) {
						t.Errorf("LastBeat went back: %v after %v", got, prev)
					}
					prev = got
					_ = h.Elapsed()
					time.Sleep(time.Millisecond)
				}
			})
		}
		calls.Wait()
		if n != beaters*beats {
			t.Fatalf("callback ran %d times, want %d", n, beaters*beats)
		}
		if h.LastBeat().IsZero() {
			t.Fatal("LastBeat() is zero after beats")
		}
	})
}

func TestBeatDoesNotAllocate(t *testing.T) {
	h := heartbeat.New()
	if a := testing.AllocsPerRun(100, h.Beat); a != 0 {
		t.Fatalf("Beat allocates %v times per call, want 0", a)
	}
	h.AddCallback(func() {})
	if a := testing.AllocsPerRun(100, h.Beat); a != 0 {
		t.Fatalf("Beat with a callback allocates %v times per call, want 0", a)
	}
}
