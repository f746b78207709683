package consumer

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// The drain budget comes from one place: with ShutdownTimeout left zero, a
// deadline on Shutdown's context is the budget (a LoopGroup's share), even
// past the 25 s default; a ShutdownTimeout that is set is only cut short
// by it; without a deadline the default holds. A handler of 40 s finishes
// in a drain whose Shutdown deadline is 60 s, and is cancelled at 10 s
// with ShutdownTimeout 10 s, at 25 s with neither. A deadline given to
// Shutdown after the drain began (Run's context cancelled first) counts
// too.
func TestShutdownDeadlineIsTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		timeout   time.Duration // Config.ShutdownTimeout
		deadline  time.Duration // of Shutdown's context; 0: none
		late      bool          // Run's context cancelled first, Shutdown a second later
		cancelled time.Duration // when the handler is cancelled; 0: never
	}{
		{"deadline past the default", 0, 60 * time.Second, false, 0},
		{"deadline after the drain began", 0, 60 * time.Second, true, 0},
		{"ShutdownTimeout set", 10 * time.Second, 60 * time.Second, false, 10 * time.Second},
		{"no deadline", 0, 0, false, DefaultShutdownTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, sqsloop.QueueSpec{})
				send(t, q, "long")
				t0 := time.Now()
				var cancelledAt time.Duration
				c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
					err := beatFor(ctx, 40*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
					if err != nil {
						cancelledAt = time.Since(t0)
					}
					return err
				}, Config{WaitTime: time.Second, ShutdownTimeout: tc.timeout, Logger: quiet})
				runCtx, stopRun := context.WithCancel(context.Background())
				defer stopRun()
				runErr := make(chan error, 1)
				go func() { runErr <- c.Run(runCtx) }()
				synctest.Wait()
				ctx := context.Background()
				if tc.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.deadline)
					defer cancel()
				}
				if tc.late {
					stopRun()
					time.Sleep(time.Second)
				}
				go func() { _ = c.Shutdown(ctx) }()
				err := <-runErr
				if cancelledAt != tc.cancelled {
					t.Errorf("handler cancelled at %v, want %v (0: never); Run = %v", cancelledAt, tc.cancelled, err)
				}
				if (err == nil) != (tc.cancelled == 0) || (err != nil && !errors.Is(err, ErrDrainTimeout)) {
					t.Errorf("Run = %v", err)
				}
			})
		})
	}
}
