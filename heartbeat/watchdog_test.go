package heartbeat_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/heartbeat"
)

// recorder collects OnStuck and OnRecovered reports.
type recorder struct {
	mu        sync.Mutex
	stuck     []heartbeat.StuckHandler
	recovered []heartbeat.StuckHandler
}

func (r *recorder) onStuck(s heartbeat.StuckHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stuck = append(r.stuck, s)
}

func (r *recorder) onRecovered(s heartbeat.StuckHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recovered = append(r.recovered, s)
}

func (r *recorder) snapshot() (stuck, recovered []heartbeat.StuckHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]heartbeat.StuckHandler(nil), r.stuck...), append([]heartbeat.StuckHandler(nil), r.recovered...)
}

// runWatchdog runs wd.Run in a goroutine and returns a stop function that
// cancels it, waits for it (and for any goroutine started with goStopped)
// and returns Run's error. stop is idempotent, so a test defers it (to end
// the bubble's goroutines even when the test fails) and also calls it.
func runWatchdog(t *testing.T, wd *heartbeat.Watchdog) (ctx context.Context, goStopped func(func()), stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var err error
	wg.Go(func() { err = wd.Run(ctx) })
	return ctx, wg.Go, sync.OnceValue(func() error {
		cancel()
		wg.Wait()
		return err
	})
}

func TestWatchdogReportsStuckOnceAndRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const threshold = 10 * time.Second // CheckInterval defaults to 2.5s
		var rec recorder
		wd, err := heartbeat.NewWatchdog(heartbeat.WatchdogConfig{
			Threshold:   threshold,
			OnStuck:     rec.onStuck,
			OnRecovered: rec.onRecovered,
		})
		if err != nil {
			t.Fatalf("NewWatchdog: %v", err)
		}
		start := time.Now()
		busy, idle := heartbeat.New(), heartbeat.New()
		wd.Watch("busy", busy)
		wd.Watch("idle", idle)
		ctx, goStopped, stop := runWatchdog(t, wd)
		defer stop()
		goStopped(func() {
			for ctx.Err() == nil {
				busy.Beat()
				time.Sleep(time.Second)
			}
		})

		time.Sleep(30 * time.Second)
		synctest.Wait()
		stuck, recovered := rec.snapshot()
		if len(stuck) != 1 || stuck[0].Name != "idle" {
			t.Fatalf("after 30s OnStuck got %+v; want exactly one report, for idle", stuck)
		}
		if !stuck[0].Since.Equal(start) {
			t.Errorf("Since = %v, want the start time %v (never beat)", stuck[0].Since, start)
		}
		if e := stuck[0].Elapsed; e < threshold || e >= threshold+threshold/4 {
			t.Errorf("Elapsed = %v, want in [Threshold, Threshold+CheckInterval)", e)
		}
		if len(recovered) != 0 {
			t.Fatalf("OnRecovered got %+v, want none", recovered)
		}
		if s := wd.Stuck(); len(s) != 1 || s[0].Name != "idle" || s[0].Elapsed < 30*time.Second-threshold/4 {
			t.Fatalf("Stuck() = %+v, want idle, stuck for about 30s", s)
		}

		idle.Beat()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		stuck, recovered = rec.snapshot()
		if len(recovered) != 1 || recovered[0].Name != "idle" {
			t.Fatalf("after a beat OnRecovered got %+v; want exactly one report, for idle", recovered)
		}
		if !recovered[0].Since.Equal(start) || recovered[0].Elapsed < 30*time.Second {
			t.Errorf("recovery = %+v; want Since %v and the whole gap (≥ 30s) as Elapsed", recovered[0], start)
		}
		if len(stuck) != 1 {
			t.Fatalf("OnStuck called %d times, want still 1", len(stuck))
		}
		if s := wd.Stuck(); len(s) != 0 {
			t.Fatalf("Stuck() = %+v after recovery, want none", s)
		}

		// Going quiet again is a new episode, reported once more.
		resumed := idle.LastBeat()
		time.Sleep(15 * time.Second)
		synctest.Wait()
		stuck, _ = rec.snapshot()
		if len(stuck) != 2 || stuck[1].Name != "idle" || !stuck[1].Since.Equal(resumed) {
			t.Fatalf("OnStuck got %+v; want a second report for idle since %v", stuck, resumed)
		}

		if err := stop(); err != nil {
			t.Fatalf("Run returned %v after cancel, want nil", err)
		}
	})
}

func TestWatchdogUnwatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		var unwatchB func()
		wd, err := heartbeat.NewWatchdog(heartbeat.WatchdogConfig{
			Threshold:     4 * time.Second,
			CheckInterval: time.Second,
			OnStuck: func(s heartbeat.StuckHandler) {
				rec.onStuck(s)
				if s.Name == "b" {
					unwatchB() // must not deadlock
				}
			},
			OnRecovered: rec.onRecovered,
		})
		if err != nil {
			t.Fatalf("NewWatchdog: %v", err)
		}
		_, _, stop := runWatchdog(t, wd)
		defer stop()

		unwatchA := wd.Watch("a", heartbeat.New())
		b := heartbeat.New()
		unwatchB = wd.Watch("b", b) // watched while Run runs
		time.Sleep(2 * time.Second)
		unwatchA()
		unwatchA() // idempotent

		time.Sleep(10 * time.Second)
		synctest.Wait()
		stuck, _ := rec.snapshot()
		if len(stuck) != 1 || stuck[0].Name != "b" {
			t.Fatalf("OnStuck got %+v; want only b (a was unwatched)", stuck)
		}
		if s := wd.Stuck(); len(s) != 0 {
			t.Fatalf("Stuck() = %+v, want none (b unwatched itself)", s)
		}
		b.Beat()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if _, recovered := rec.snapshot(); len(recovered) != 0 {
			t.Fatalf("OnRecovered got %+v for an unwatched handler, want none", recovered)
		}
		if wd.Watch("nil", nil) == nil {
			t.Fatal("Watch(name, nil) returned a nil func")
		}
		if err := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}

func TestWatchdogRunErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wd, err := heartbeat.NewWatchdog(heartbeat.WatchdogConfig{Threshold: time.Second})
		if err != nil {
			t.Fatalf("NewWatchdog: %v", err)
		}
		_, _, stop := runWatchdog(t, wd)
		defer stop()
		synctest.Wait()
		if err := wd.Run(t.Context()); !errors.Is(err, heartbeat.ErrAlreadyRunning) {
			t.Fatalf("second Run = %v, want ErrAlreadyRunning", err)
		}
		if err := stop(); err != nil {
			t.Fatalf("Run after cancel = %v, want nil", err)
		}
		// Once stopped, it may run again.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := wd.Run(ctx); err != nil {
			t.Fatalf("Run with a done ctx = %v, want nil", err)
		}
		var nilCtx context.Context
		if err := wd.Run(nilCtx); !errors.Is(err, heartbeat.ErrInvalidArgument) {
			t.Fatalf("Run(nil) = %v, want ErrInvalidArgument", err)
		}
		var zero heartbeat.Watchdog
		if err := zero.Run(t.Context()); !errors.Is(err, heartbeat.ErrInvalidArgument) {
			t.Fatalf("zero Watchdog Run = %v, want ErrInvalidArgument", err)
		}
	})
}
