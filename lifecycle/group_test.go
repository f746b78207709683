package lifecycle

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestRunStopsCleanlyWhenContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newBlockingLoop(), newDrainLoop(time.Second)
		g, f := newGroup(t, map[string]Runnable{"a": a, "b": b})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		<-a.started
		cancel()
		if err := <-res; err != nil {
			t.Errorf("Run = %v, want nil (context.Canceled after a stop request is clean)", err)
		}
		if g.live() {
			t.Error("live after Run returned")
		}
		if f.stopped != 1 || f.installed {
			t.Errorf("signal handler: stopped %d times, installed %v; want released once", f.stopped, f.installed)
		}
	})
}

func TestLoopFailureBringsOthersDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errBoom := errors.New("boom")
		other := newBlockingLoop()
		drainer := newDrainLoop(2 * time.Second)
		g, _ := newGroup(t, map[string]Runnable{
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
		if les["failing"] != errBoom {
			t.Errorf("the loop's error %v, want errBoom itself", les["failing"])
		}
		for _, l := range g.Stats().Loops {
			if (l.Name == "failing") != (l.Err != nil) || l.Name == "failing" && l.Err != errBoom {
				t.Errorf("Stats: loop %s's Err %v, want errBoom for failing only", l.Name, l.Err)
			}
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
		g, _ := newGroup(t, map[string]Runnable{
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
		g, _ := newGroup(t, map[string]Runnable{
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
		g, _ := newGroup(t, map[string]Runnable{
			"job":   RunnableFunc(func(context.Context) error { return nil }),
			"other": newBlockingLoop(),
		})
		if err := g.Run(context.Background()); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}

// The order of a shutdown begun by a signal: readiness is false before any
// loop is asked; a plain loop's context is cancelled at once, with a cause
// naming the signal; a Shutdowner gets a context without deadline and
// keeps its Run context; the group waits for the slowest drain and for a
// Shutdown call that outlives its Run (as net/http.Server's does).
func TestShutdownOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g *LoopGroup
		var plainReady, plainCause, drainReady error
		var plainStopped time.Time
		plain := RunnableFunc(func(ctx context.Context) error {
			<-ctx.Done()
			plainStopped, plainReady, plainCause = time.Now(), g.Ready(), context.Cause(ctx)
			return context.Cause(ctx) // wraps context.Canceled: clean
		})
		drainer := newDrainLoop(5 * time.Second)
		drainer.onShutdown = func() { drainReady = g.Ready() }
		server := &serverLoop{linger: 7 * time.Second, closed: make(chan struct{})}
		g, f := newGroup(t, map[string]Runnable{"plain": plain, "drainer": drainer, "server": server})

		res := runAsync(context.Background(), g)
		synctest.Wait()
		if err := g.Ready(); err != nil {
			t.Fatalf("Ready while running = %v", err)
		}
		start := time.Now()
		f.send(t, syscall.SIGTERM)
		if err := <-res; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
		if got := time.Since(start); got != 7*time.Second {
			t.Errorf("Run returned %v after the signal, want 7s (the server's Shutdown)", got)
		}
		if !plainStopped.Equal(start) {
			t.Errorf("plain loop stopped %v after the signal, want at once", plainStopped.Sub(start))
		}
		for name, err := range map[string]error{"plain": plainReady, "drainer": drainReady} {
			if err == nil || !strings.Contains(err.Error(), "shutting down") {
				t.Errorf("Ready when %s was asked to stop = %v, want shutting down", name, err)
			}
		}
		if !errors.Is(plainCause, context.Canceled) || !strings.Contains(plainCause.Error(), "terminated") {
			t.Errorf("cause = %v, want context.Canceled naming the signal", plainCause)
		}
		if drainer.hadDeadline.Load() {
			t.Error("Shutdown's context has a deadline")
		}
		if drainer.ctxErr() != nil {
			t.Errorf("drainer's Run ctx cancelled before it drained: %v", drainer.ctxErr())
		}
		if got := f.exitCodes(); len(got) != 0 {
			t.Errorf("one signal exited with %v", got)
		}
	})
}

// A Shutdowner drains on its own budget: the group waits however long the
// drain takes.
func TestShutdownerDrainsWithoutGroupDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := newDrainLoop(time.Hour)
		g, _ := newGroup(t, map[string]Runnable{"slow": slow})
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
	})
}

// A Shutdown that fails is reported, and the loop's Run context is
// cancelled, the other way to ask it to stop.
func TestShutdownErrorReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errClose := errors.New("close failed")
		failing := &failingShutdown{err: errClose}
		g, _ := newGroup(t, map[string]Runnable{"d": failing})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := g.Run(ctx)
		if les := loopErrors(err); !errors.Is(les["d"], errClose) || !strings.Contains(les["d"].Error(), "shutdown: close failed") {
			t.Errorf("Run = %v, want d's Shutdown error", err)
		}
	})
}

// failingShutdown's Shutdown fails without stopping Run, which returns
// only when its context is cancelled.
type failingShutdown struct{ err error }

func (f *failingShutdown) Run(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (f *failingShutdown) Shutdown(context.Context) error { return f.err }

func TestLoopPanicReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, _ := newGroup(t, map[string]Runnable{
			"panicky": RunnableFunc(func(context.Context) error { panic("oops") }),
			"other":   newBlockingLoop(),
		})
		err := g.Run(context.Background())
		if le := loopErrors(err)["panicky"]; le == nil || !strings.Contains(le.Error(), "panic: oops") || !strings.Contains(le.Error(), "goroutine") {
			t.Errorf("Run = %v, want panicky's panic reported with its stack", err)
		}
	})
}

func TestShutdownPanicReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, _ := newGroup(t, map[string]Runnable{"p": panickyShutdown{}})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		synctest.Wait()
		cancel()
		if le := loopErrors(<-res)["p"]; le == nil || !strings.Contains(le.Error(), "shutdown: panic: kaboom") {
			t.Errorf("Run = %v, want p's Shutdown panic reported", le)
		}
	})
}

// panickyShutdown's Shutdown panics; Run returns when its context is
// cancelled.
type panickyShutdown struct{}

func (panickyShutdown) Run(ctx context.Context) error  { <-ctx.Done(); return nil }
func (panickyShutdown) Shutdown(context.Context) error { panic("kaboom") }

func TestLoopContextCarriesValuesNotCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		d := newDrainLoop(time.Second)
		var got any
		g, _ := newGroup(t, map[string]Runnable{
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
		g, _ := newGroup(t, map[string]Runnable{"a": newBlockingLoop()})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		synctest.Wait()
		if err := g.Run(ctx); !errors.Is(err, sqsloop.ErrAlreadyRunning) {
			t.Errorf("concurrent Run = %v, want sqsloop.ErrAlreadyRunning", err)
		}
		if err := g.Add("late", newBlockingLoop()); !errors.Is(err, sqsloop.ErrAlreadyRunning) {
			t.Errorf("Add during Run = %v, want sqsloop.ErrAlreadyRunning", err)
		}
		cancel()
		<-res
		if err := g.Run(context.Background()); !errors.Is(err, sqsloop.ErrAlreadyRunning) {
			t.Errorf("Run after Run = %v, want sqsloop.ErrAlreadyRunning", err)
		}
	})
}

func TestEmptyGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := LoopGroup{Signals: []os.Signal{}} // zero value but for signals: no os/signal in a bubble
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if err := g.Run(ctx); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("empty group returned after %v, want when ctx ended (1s)", got)
		}
	})
}

func TestAddValidation(t *testing.T) {
	g, _ := newGroup(t, map[string]Runnable{"a": newBlockingLoop()})
	for _, tc := range []struct {
		name string
		r    Runnable
		want string
	}{
		{"", newBlockingLoop(), `lifecycle: name: want a non-empty name, got ""`},
		{"b", nil, `lifecycle: r: want a non-nil Runnable for loop "b", got nil`},
		{"a", newBlockingLoop(), `lifecycle: name: want a name not yet in the group, got "a"`},
	} {
		err := g.Add(tc.name, tc.r)
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || err.Error() != tc.want {
			t.Errorf("Add(%q) = %v, want sqsloop.ErrInvalidArgument reading %q", tc.name, err, tc.want)
		}
	}
}
