package main

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestPaceCreditsWallClock checks the contract's normative pacing: the
// jobs dispatched follow the time elapsed, not the ticks, even when the
// dispatch loop is held up for longer than a tick.
func TestPaceCreditsWallClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := settings{rate: 600, batchMS: 25, batchMax: 128}
		tel := newTelemetry(settings{sampleEvery: 5, rate: 600})
		ctx, cancel := context.WithCancel(t.Context())
		batches := make(chan int)
		go pace(ctx, s, tel, batches)
		total := 0
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			total += <-batches
			time.Sleep(70 * time.Millisecond) // a slow consumer of batches: ticks are missed
		}
		cancel()
		if total < 5900 || total > 6100 {
			t.Errorf("dispatched %d jobs in 10 s at 600/s, want 6,000 ± 100", total)
		}
	})
}

// TestKeepDepthCountsWhatIsOnItsWay checks that depth-target mode does not
// send the same shortfall again at every tick while the depth it read is
// stale.
func TestKeepDepthCountsWhatIsOnItsWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := settings{mode: "depth-target", targetDepth: 1000, batchMS: 10, batchMax: 128}
		tel := newTelemetry(settings{sampleEvery: 5})
		ctx, cancel := context.WithCancel(t.Context())
		batches := make(chan int, 100)
		go keepDepth(ctx, s, tel, batches)
		time.Sleep(time.Second) // 100 ticks; the depth read stays 0, nothing is sent
		cancel()
		total := 0
		for len(batches) > 0 {
			total += <-batches
		}
		if total != 1000 {
			t.Errorf("queued %d jobs for a shortfall of 1,000 over 100 ticks, want 1,000", total)
		}
	})
}
