package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// Weights on every mailbox (issue 29): one consumer of 16 handlers over a
// high queue (weight 3) and a low one (weight 1), jobs of 100 ms. Both
// full for 6 s: high gets 75 % ± 5 % of the handler time (± 10 % on the
// wire in CI, but with SQSLOOP_FLEET_FULL); then high runs
// dry and low has all 16 handlers within one receive round trip of high's
// last job ending (checked in virtual time, where a receive waiting in its
// long poll gives its share back after 20 ms and the next gathers for up
// to 10 ms; logged on the wire).
func TestE2EWeightedQueues(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		high, cleanHigh := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: 30 * time.Second})
		defer cleanHigh()
		low, cleanLow := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: 30 * time.Second})
		defer cleanLow()
		const job, full = 100 * time.Millisecond, 6 * time.Second
		nHigh := int(full/job) * 12 // 6 s of high's share
		sendBodiesPrefixed(ctx, t, high.Mailbox, "high", nHigh)
		sendBodiesPrefixed(ctx, t, low.Mailbox, "low", 4000)
		var (
			mu      sync.Mutex
			spent   = map[string]time.Duration{}
			running = map[string]int{}
			started = map[string]int{}
			lastEnd time.Time
		)
		began := time.Now()
		c, err := consumer.NewQueues([]consumer.Queue{{Mailbox: high.Mailbox, Weight: 3}, {Mailbox: low.Mailbox, Weight: 1}},
			func(ctx context.Context, m *sqsloop.Message) error {
				q, _, _ := strings.Cut(m.Body, "-")
				mu.Lock()
				running[q]++
				started[q]++
				mu.Unlock()
				s := time.Now()
				err := h.Sleep(ctx, job)
				mu.Lock()
				defer mu.Unlock()
				running[q]--
				if q == "high" {
					lastEnd = time.Now()
				}
				if s.Sub(began) > time.Second && s.Sub(began) < full { // both full, past the start
					spent[q] += time.Since(s)
				}
				return err
			}, consumer.Config{Concurrency: 16, WaitTime: 2 * time.Second, Logger: quietLogger})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		if !waitUntil(ctx, h, 2*time.Minute, 5*time.Millisecond, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return started["high"] == nHigh && running["high"] == 0
		}) {
			t.Fatal("high's messages did not all run")
		}
		mu.Lock()
		ended := lastEnd
		mu.Unlock()
		var filled time.Duration
		waitUntil(ctx, h, 5*time.Second, time.Millisecond, func() bool {
			mu.Lock()
			defer mu.Unlock()
			filled = time.Since(ended)
			return running["low"] == 16
		})
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		share := float64(spent["high"]) / float64(spent["high"]+spent["low"])
		mu.Unlock()
		t.Logf("%s: high had %.1f %% of the handler time while both were full; low ran 16 handlers %v after high's last job ended",
			h.Name(), 100*share, filled.Round(time.Millisecond))
		// ± 5 % in virtual time and in the full run; on the wire in CI, a
		// loaded machine's late receives give low more (68 % seen), so
		// ± 10 % there (weights not kept give 50 %).
		tolerance := 0.05
		if !h.Features().VirtualTime && !fullFleet() {
			tolerance = 0.10
		}
		if share < 0.75-tolerance || share > 0.75+tolerance {
			t.Errorf("high had %.1f %% of the handler time, want 75 %% ± %.0f %%", 100*share, 100*tolerance)
		}
		// In virtual time a receive of high waiting in its long poll gives
		// its share back 20 ms after it went out (twice the round trip, at
		// least 20 ms), two such receives one after the other at most, and
		// low's next receive gathers its batch for up to 10 ms, seen here
		// within the 1 ms look: 51 ms at most (21–41 ms seen). The wire's is
		// logged: no wall-clock bound in a test.
		if h.Features().VirtualTime && filled > 51*time.Millisecond {
			t.Errorf("low ran 16 handlers %v after high ran dry, want within twice a receive round trip (at least 20 ms)", filled)
		}
	})
}

func sendBodiesPrefixed(ctx context.Context, t *testing.T, mb sqsloop.Mailbox, prefix string, n int) {
	t.Helper()
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprint(prefix, "-", i)
	}
	mailboxtest.SendBodies(ctx, t, mb, bodies...)
}
