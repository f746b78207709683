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
		h := heartbeat.New()
		time.Sleep(7 * time.Second)
		if got := h.LastBeat(); !got.IsZero() {
			t.Fatalf("LastBeat() = %v, want zero Time", got)
		}
	})
}

func TestLastBeatMovesOnlyWithBeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heartbeat.New()
		time.Sleep(5 * time.Second)
		h.Beat()
		beatAt := time.Now()
		if got := h.LastBeat(); !got.Equal(beatAt) {
			t.Fatalf("LastBeat() = %v, want %v", got, beatAt)
		}
		time.Sleep(3 * time.Second)
		if got := h.LastBeat(); !got.Equal(beatAt) {
			t.Fatalf("LastBeat() moved without a beat: %v, want %v", got, beatAt)
		}
		h.Beat()
		time.Sleep(time.Second)
		if got := h.LastBeat(); !got.Equal(time.Now()) {
			t.Fatalf("LastBeat() after a new beat = %v, want now %v (stamped when observed)", got, time.Now())
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
	if !h.LastBeat().IsZero() {
		t.Fatalf("nil Heartbeat: LastBeat=%v, want the zero Time", h.LastBeat())
	}
}

// Many beaters and observers at once; run with -race.
func TestConcurrentBeatAndObserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heartbeat.New()
		var calls sync.WaitGroup
		const beaters, beats = 8, 200
		for range beaters {
			calls.Go(func() {
				for range beats {
					h.Beat()
					time.Sleep(time.Millisecond)
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
					time.Sleep(time.Millisecond)
				}
			})
		}
		calls.Wait()
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
}
