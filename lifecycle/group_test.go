package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func newGroup(t *testing.T, cfg GroupConfig, loops map[string]Runnable) *LoopGroup {
	t.Helper()
	g, err := NewLoopGroup(cfg)
	if err != nil {
		t.Fatalf("NewLoopGroup: %v", err)
	}
	for name, r := range loops {
		if err := g.Add(name, r); err != nil {
			t.Fatalf("Add(%q): %v", name, err)
		}
	}
	return g
}

// runAsync runs g in a goroutine and returns the channel its result lands on.
func runAsync(ctx context.Context, g *LoopGroup) <-chan error {
	res := make(chan error, 1)
	go func() { res <- g.Run(ctx) }()
	return res
}

// loopErrors returns the *LoopError of each failing loop, by name.
func loopErrors(err error) map[string]*LoopError {
	out := map[string]*LoopError{}
	var walk func(error)
	walk = func(err error) {
		var le *LoopError
		if errors.As(err, &le) && err == error(le) {
			out[le.Name] = le
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

func TestRunStopsCleanlyWhenContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newBlockingLoop(), newDrainLoop(time.Second)
		g := newGroup(t, GroupConfig{}, map[string]Runnable{"a": a, "b": b})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		<-a.started
		cancel()
		if err := <-res; err != nil {
			t.Errorf("Run = %v, want nil (context.Canceled after a stop request is clean)", err)
		}
		if g.Live() {
			t.Error("Live after Run returned")
		}
	})
}

func TestLoopFailureBringsOthersDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errBoom := errors.New("boom")
		other := newBlockingLoop()
		drainer := newDrainLoop(2 * time.Second)
		g := newGroup(t, GroupConfig{}, map[string]Runnable{
			"failing": RunnableFunc(func(ctx context.Context) error {
				select { // runs for a while, then fails
				case <-time.After(time.Second):
				case <-ctx.Done():
				}
				return errBoom
			}),
			"other":   other,
			"drainer": drainer,
		})
		start := time.Now()
		err := g.Run(context.Background())
		if !errors.Is(err, errBoom) {
			t.Fatalf("Run = %v, want errBoom", err)
		}
		les := loopErrors(err)
		if len(les) != 1 || les["failing"] == nil {
			t.Fatalf("loop errors = %v, want only %q", les, "failing")
		}
		if !errors.Is(les["failing"], errBoom) {
			t.Errorf("LoopError does not unwrap to errBoom: %v", les["failing"])
		}
		if !strings.Contains(err.Error(), `loop "failing"`) {
			t.Errorf("error %q does not name the loop", err)
		}
		// The drainer was asked to Shutdown and finished its 2 s of work
		// before its Run context was cancelled.
		if got := drainer.ctxErr(); got != nil {
			t.Errorf("drainer's Run ctx was cancelled before it drained: %v", got)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("Run took %v of virtual time, want 3s (1s run + 2s drain)", got)
		}
	})
}

func TestLoopErrorsReportedByName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errA, errB := errors.New("a failed"), errors.New("b failed")
		failOnStop := func(err error) Runnable {
			return RunnableFunc(func(ctx context.Context) error { <-ctx.Done(); return err })
		}
		g := newGroup(t, GroupConfig{}, map[string]Runnable{
			"a":     failOnStop(errA),
			"b":     failOnStop(errB),
			"clean": newBlockingLoop(),
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := g.Run(ctx)
		les := loopErrors(err)
		if len(les) != 2 {
			t.Fatalf("loop errors = %v, want a and b", err)
		}
		if !errors.Is(les["a"], errA) || !errors.Is(les["b"], errB) {
			t.Errorf("loop errors by name: a=%v b=%v", les["a"], les["b"])
		}
	})
}

func TestCanceledWithoutStopRequestIsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, GroupConfig{}, map[string]Runnable{
			"rogue": RunnableFunc(func(context.Context) error { return context.Canceled }),
			"other": newBlockingLoop(),
		})
		err := g.Run(context.Background())
		les := loopErrors(err)
		if len(les) != 1 || !errors.Is(les["rogue"], context.Canceled) {
			t.Errorf("Run = %v, want rogue's context.Canceled reported", err)
		}
	})
}

func TestLoopReturningNilStopsGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		other := newBlockingLoop()
		g := newGroup(t, GroupConfig{}, map[string]Runnable{
			"job":   RunnableFunc(func(context.Context) error { return nil }),
			"other": other,
		})
		if err := g.Run(context.Background()); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}

// A Shutdowner drains on its own budget: the group gives Shutdown a context
// without deadline, never cancels the loop's Run context before Run
// returns, and waits however long the drain takes.
func TestShutdownerDrainsWithoutGroupDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := newDrainLoop(time.Hour)
		g := newGroup(t, GroupConfig{}, map[string]Runnable{"slow": slow})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		synctest.Wait()
		start := time.Now()
		cancel()
		if err := <-res; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
		if got := time.Since(start); got != time.Hour {
			t.Errorf("Run returned %v after cancel, want the loop's 1h drain", got)
		}
		if slow.ctxErr() != nil {
			t.Errorf("Run ctx cancelled before the loop drained: %v", slow.ctxErr())
		}
		if slow.hadDeadline.Load() {
			t.Error("Shutdown's context has a deadline")
		}
	})
}

func TestShutdownErrorReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errClose := errors.New("close failed")
		d := newDrainLoop(time.Second)
		d.shutdownErr = errClose
		g := newGroup(t, GroupConfig{}, map[string]Runnable{"d": d})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := g.Run(ctx)
		if les := loopErrors(err); !errors.Is(les["d"], errClose) {
			t.Errorf("Run = %v, want d's Shutdown error", err)
		}
	})
}

func TestLoopPanicReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		other := newBlockingLoop()
		g := newGroup(t, GroupConfig{}, map[string]Runnable{
			"panicky": RunnableFunc(func(context.Context) error { panic("oops") }),
			"other":   other,
		})
		err := g.Run(context.Background())
		if le := loopErrors(err)["panicky"]; le == nil || !strings.Contains(le.Error(), "panic: oops") {
			t.Errorf("Run = %v, want panicky's panic reported", err)
		}
	})
}

func TestCoordinatorTriggerStopsGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{})
		defer c.Stop()
		a := newBlockingLoop()
		g := newGroup(t, GroupConfig{Coordinator: c}, map[string]Runnable{"a": a})
		res := runAsync(context.Background(), g)
		<-a.started
		c.Trigger()
		if err := <-res; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}

func TestGroupTriggersCoordinator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{})
		defer c.Stop()
		ran := make(chan struct{})
		c.Register("cleanup", func(context.Context) error { close(ran); return nil })
		g := newGroup(t, GroupConfig{Coordinator: c}, map[string]Runnable{
			"dies":  RunnableFunc(func(context.Context) error { return errors.New("dead") }),
			"other": newBlockingLoop(),
		})
		_ = g.Run(context.Background())
		if !isClosed(c.Done()) {
			t.Fatal("group shutdown did not trigger the coordinator")
		}
		cause := context.Cause(c.Context())
		if !errors.Is(cause, ErrShutdown) || !strings.Contains(cause.Error(), `"dies"`) {
			t.Errorf("cause = %v, want ErrShutdown naming the loop", cause)
		}
		if err := c.Wait(context.Background()); err != nil || !isClosed(ran) {
			t.Errorf("callbacks: Wait = %v, ran = %v", err, isClosed(ran))
		}
	})
}

func TestLoopContextCarriesValuesNotCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		d := newDrainLoop(time.Second)
		var got any
		g := newGroup(t, GroupConfig{}, map[string]Runnable{
			"d": d,
			"v": RunnableFunc(func(ctx context.Context) error { got = ctx.Value(key{}); <-ctx.Done(); return nil }),
		})
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v1"))
		res := runAsync(ctx, g)
		synctest.Wait()
		cancel()
		if err := <-res; err != nil {
			t.Errorf("Run = %v", err)
		}
		if got != "v1" {
			t.Errorf("loop ctx value = %v, want v1", got)
		}
		if d.ctxErr() != nil {
			t.Errorf("caller's cancel reached the Shutdowner's Run ctx before it drained: %v", d.ctxErr())
		}
	})
}

func TestSecondRunAndLateAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, GroupConfig{}, map[string]Runnable{"a": newBlockingLoop()})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		synctest.Wait()
		if err := g.Run(ctx); !errors.Is(err, ErrAlreadyRunning) {
			t.Errorf("concurrent Run = %v, want ErrAlreadyRunning", err)
		}
		if err := g.Add("late", newBlockingLoop()); !errors.Is(err, ErrAlreadyRunning) {
			t.Errorf("Add during Run = %v, want ErrAlreadyRunning", err)
		}
		cancel()
		<-res
		if err := g.Run(context.Background()); !errors.Is(err, ErrAlreadyRunning) {
			t.Errorf("Run after Run = %v, want ErrAlreadyRunning", err)
		}
	})
}

func TestEmptyGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g LoopGroup // zero value is usable
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := g.Run(ctx); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}

func TestAddValidation(t *testing.T) {
	g := newGroup(t, GroupConfig{}, map[string]Runnable{"a": newBlockingLoop()})
	for _, tc := range []struct {
		name string
		r    Runnable
		want string
	}{
		{"", newBlockingLoop(), "name is empty"},
		{"b", nil, "nil"},
		{"a", newBlockingLoop(), "already in the group"},
	} {
		err := g.Add(tc.name, tc.r)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%q) = %v, want ErrInvalidConfig mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestNilLoopErrorIsSafe(t *testing.T) {
	var le *LoopError
	if le.Unwrap() != nil || le.Error() == "" {
		t.Errorf("nil LoopError: Unwrap = %v, Error = %q", le.Unwrap(), le.Error())
	}
}
