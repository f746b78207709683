package lifecycle

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// fakeSignals swaps signal.Notify/Stop for recorders and collects exit codes,
// so tests feed c.sigCh instead of signalling the test process.
type fakeSignals struct {
	mu       sync.Mutex
	notified []os.Signal
	stopped  int
	codes    []int
}

func newTestCoordinator(t *testing.T, cfg CoordinatorConfig) (*ShutdownCoordinator, *fakeSignals) {
	t.Helper()
	f := &fakeSignals{}
	cfg.Exit = func(code int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.codes = append(f.codes, code)
	}
	c, err := NewShutdownCoordinator(cfg)
	if err != nil {
		t.Fatalf("NewShutdownCoordinator: %v", err)
	}
	c.notify = func(ch chan<- os.Signal, sig ...os.Signal) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if ch != c.sigCh {
			t.Errorf("notify got a channel other than the coordinator's")
		}
		f.notified = append(f.notified, sig...)
	}
	c.stopNotify = func(ch chan<- os.Signal) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stopped++
	}
	return c, f
}

func (f *fakeSignals) exitCodes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.codes)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestTriggerBeginsShutdown(t *testing.T) {
	c, _ := newTestCoordinator(t, CoordinatorConfig{})
	defer c.Stop()
	if isClosed(c.Done()) || c.Context().Err() != nil {
		t.Fatal("shutdown began before Trigger")
	}
	c.Trigger()
	c.Trigger() // second call is a no-op
	if !isClosed(c.Done()) {
		t.Error("Done not closed after Trigger")
	}
	if !errors.Is(c.Context().Err(), context.Canceled) {
		t.Errorf("Context().Err() = %v, want context.Canceled", c.Context().Err())
	}
	if cause := context.Cause(c.Context()); !errors.Is(cause, ErrShutdown) {
		t.Errorf("cause = %v, want ErrShutdown", cause)
	}
}

func TestZeroValueCoordinator(t *testing.T) {
	var c ShutdownCoordinator
	defer c.Stop()
	c.Trigger()
	if !isClosed(c.Done()) {
		t.Error("Done not closed after Trigger on zero value")
	}
	if err := c.Wait(context.Background()); err != nil {
		t.Errorf("Wait = %v, want nil", err)
	}
}

func TestSecondSignalExits(t *testing.T) {
	tests := []struct {
		first, second os.Signal
		code          int
	}{
		{syscall.SIGINT, syscall.SIGINT, 130},
		{syscall.SIGTERM, syscall.SIGTERM, 143},
		{syscall.SIGTERM, syscall.SIGINT, 130},
	}
	for _, tt := range tests {
		t.Run(tt.first.String()+"+"+tt.second.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, f := newTestCoordinator(t, CoordinatorConfig{})
				defer c.Stop()
				if err := c.Install(); err != nil {
					t.Fatalf("Install: %v", err)
				}
				c.sigCh <- tt.first
				synctest.Wait()
				if !isClosed(c.Done()) {
					t.Fatal("first signal did not begin shutdown")
				}
				if got := f.exitCodes(); len(got) != 0 {
					t.Fatalf("first signal exited with %v", got)
				}
				cause := context.Cause(c.Context())
				if !errors.Is(cause, ErrShutdown) || !strings.Contains(cause.Error(), tt.first.String()) {
					t.Errorf("cause = %v, want ErrShutdown naming %v", cause, tt.first)
				}
				c.sigCh <- tt.second
				synctest.Wait()
				if got := f.exitCodes(); !slices.Equal(got, []int{tt.code}) {
					t.Errorf("exit codes = %v, want [%d]", got, tt.code)
				}
			})
		})
	}
}

func TestSignalAfterTriggerCountsAsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newTestCoordinator(t, CoordinatorConfig{})
		defer c.Stop()
		if err := c.Install(); err != nil {
			t.Fatalf("Install: %v", err)
		}
		c.Trigger()
		c.sigCh <- syscall.SIGTERM // a deploy's SIGTERM during a programmatic drain
		synctest.Wait()
		if got := f.exitCodes(); len(got) != 0 {
			t.Fatalf("first signal after Trigger exited with %v", got)
		}
		c.sigCh <- syscall.SIGTERM
		synctest.Wait()
		if got := f.exitCodes(); !slices.Equal(got, []int{143}) {
			t.Errorf("exit codes = %v, want [143]", got)
		}
	})
}

func TestInstallAndStop(t *testing.T) {
	c, f := newTestCoordinator(t, CoordinatorConfig{})
	if err := c.Install(); err != nil {
		t.Fatalf("Install: %v", err)
	}
	if err := c.Install(); !errors.Is(err, ErrAlreadyInstalled) {
		t.Errorf("second Install = %v, want ErrAlreadyInstalled", err)
	}
	f.mu.Lock()
	notified := slices.Clone(f.notified)
	f.mu.Unlock()
	if !slices.Equal(notified, []os.Signal{syscall.SIGTERM, os.Interrupt}) {
		t.Errorf("notified %v, want [SIGTERM SIGINT]", notified)
	}
	c.Stop()
	c.Stop() // idempotent
	f.mu.Lock()
	stopped := f.stopped
	f.mu.Unlock()
	if stopped != 1 {
		t.Errorf("signal.Stop called %d times, want 1", stopped)
	}
	if err := c.Install(); !errors.Is(err, ErrCoordinatorStopped) {
		t.Errorf("Install after Stop = %v, want ErrCoordinatorStopped", err)
	}
	if isClosed(c.Done()) {
		t.Error("Stop began shutdown")
	}
}

func TestInstallCustomSignals(t *testing.T) {
	c, f := newTestCoordinator(t, CoordinatorConfig{Signals: []os.Signal{syscall.SIGHUP}})
	defer c.Stop()
	if err := c.Install(); err != nil {
		t.Fatalf("Install: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(f.notified, []os.Signal{syscall.SIGHUP}) {
		t.Errorf("notified %v, want [SIGHUP]", f.notified)
	}
}

// TestInstallRealNotify wires the real os/signal package (no signal is sent)
// and checks Stop releases it and ends the goroutine (goleak in TestMain).
func TestInstallRealNotify(t *testing.T) {
	c, err := NewShutdownCoordinator(CoordinatorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Install(); err != nil {
		t.Fatalf("Install: %v", err)
	}
	c.Stop()
	if isClosed(c.Done()) {
		t.Error("shutdown began without a signal")
	}
}

func TestCallbacksRunInRegistrationOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{})
		defer c.Stop()
		var mu sync.Mutex
		var order []string
		record := func(name string, err error) func(context.Context) error {
			return func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				order = append(order, name)
				return err
			}
		}
		errFlush := errors.New("flush failed")
		c.Register("a", record("a", nil))
		unregisterB := c.Register("b", record("b", nil))
		c.Register("c", record("c", errFlush))
		unregisterB()
		unregisterB() // idempotent
		synctest.Wait()
		mu.Lock()
		if len(order) != 0 {
			t.Errorf("callbacks ran before shutdown: %v", order)
		}
		mu.Unlock()

		c.Trigger()
		err := c.Wait(context.Background())
		if !errors.Is(err, errFlush) || !strings.Contains(err.Error(), `"c"`) {
			t.Errorf("Wait = %v, want errFlush naming callback c", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(order, []string{"a", "c"}) {
			t.Errorf("order = %v, want [a c]", order)
		}
	})
}

func TestRegisterAfterShutdownStillRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{})
		defer c.Stop()
		c.Trigger()
		if err := c.Wait(context.Background()); err != nil {
			t.Fatalf("Wait = %v", err)
		}
		ran := make(chan struct{})
		c.Register("late", func(context.Context) error { close(ran); return errors.New("late failure") })
		err := c.Wait(context.Background())
		if !isClosed(ran) {
			t.Error("late callback did not run before Wait returned")
		}
		if err == nil || !strings.Contains(err.Error(), `"late"`) {
			t.Errorf("Wait = %v, want the late callback's error", err)
		}
	})
}

func TestRegisterAfterStopDoesNothing(t *testing.T) {
	c, _ := newTestCoordinator(t, CoordinatorConfig{})
	c.Stop()
	unregister := c.Register("x", func(context.Context) error { t.Error("callback ran after Stop"); return nil })
	unregister()
	c.Trigger()
	if err := c.Wait(context.Background()); err != nil {
		t.Errorf("Wait = %v, want nil", err)
	}
}

func TestCallbackTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{CallbackTimeout: 5 * time.Second})
		defer c.Stop()
		var waited time.Duration
		c.Register("stuck", func(ctx context.Context) error {
			start := time.Now()
			<-ctx.Done()
			waited = time.Since(start)
			return ctx.Err()
		})
		c.Trigger()
		err := c.Wait(context.Background())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait = %v, want context.DeadlineExceeded", err)
		}
		if waited != 5*time.Second {
			t.Errorf("callback context lasted %v, want CallbackTimeout 5s", waited)
		}
	})
}

func TestCallbackPanicAndNil(t *testing.T) {
	c, _ := newTestCoordinator(t, CoordinatorConfig{})
	defer c.Stop()
	c.Register("boom", func(context.Context) error { panic("kaboom") })
	c.Register("nil", nil)
	after := make(chan struct{})
	c.Register("after", func(context.Context) error { close(after); return nil })
	c.Trigger()
	err := c.Wait(context.Background())
	if err == nil || !strings.Contains(err.Error(), "kaboom") || !strings.Contains(err.Error(), `"nil"`) {
		t.Errorf("Wait = %v, want the panic and the nil callback reported", err)
	}
	if !isClosed(after) {
		t.Error("callback after a panicking one did not run")
	}
}

func TestWaitHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{})
		defer c.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := c.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait before shutdown = %v, want DeadlineExceeded", err)
		}

		release := make(chan struct{})
		c.Register("slow", func(context.Context) error { <-release; return nil })
		c.Trigger()
		ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		if err := c.Wait(ctx2); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait on a slow callback = %v, want DeadlineExceeded", err)
		}
		close(release)
	})
}

func TestStopWaitsForCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{})
		release := make(chan struct{})
		c.Register("slow", func(context.Context) error { <-release; return nil })
		c.Trigger()
		stopped := make(chan struct{})
		go func() {
			c.Stop()
			close(stopped)
		}()
		synctest.Wait()
		if isClosed(stopped) {
			t.Fatal("Stop returned while a callback was running")
		}
		close(release)
		synctest.Wait()
		if !isClosed(stopped) {
			t.Error("Stop did not return after the callback finished")
		}
	})
}

func TestCoordinatorConfigValidate(t *testing.T) {
	err := CoordinatorConfig{Signals: []os.Signal{nil}, CallbackTimeout: -time.Second}.Validate()
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Validate = %v, want ErrInvalidConfig", err)
	}
	for _, field := range []string{"Signals[0]", "CallbackTimeout"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("Validate error %q does not name %s", err, field)
		}
	}
	if c, err := NewShutdownCoordinator(CoordinatorConfig{CallbackTimeout: -1}); c != nil || !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("NewShutdownCoordinator(invalid) = %v, %v; want nil, ErrInvalidConfig", c, err)
	}
	if err := (CoordinatorConfig{}).Validate(); err != nil {
		t.Errorf("zero config: Validate = %v, want nil", err)
	}
}

func TestExitCode(t *testing.T) {
	for sig, want := range map[os.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143, syscall.SIGHUP: 129, fakeSignal{}: 1} {
		if got := exitCode(sig); got != want {
			t.Errorf("exitCode(%v) = %d, want %d", sig, got, want)
		}
	}
}

type fakeSignal struct{}

func (fakeSignal) String() string { return "fake" }
func (fakeSignal) Signal()        {}

// A callback registered late shares the budget counted from the start of
// shutdown; it does not get a fresh CallbackTimeout.
func TestLateCallbackSharesTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{CallbackTimeout: 5 * time.Second})
		defer c.Stop()
		began := time.Now()
		c.Trigger()
		time.Sleep(4 * time.Second)
		ended := make(chan time.Time, 1)
		c.Register("late", func(ctx context.Context) error {
			<-ctx.Done()
			ended <- time.Now()
			return nil
		})
		if got := (<-ended).Sub(began); got != 5*time.Second {
			t.Fatalf("late callback's context ended %v after shutdown began, want 5s", got)
		}
	})
}
