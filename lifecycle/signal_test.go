package lifecycle

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

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
				d := newDrainLoop(time.Hour)
				g, f := newGroup(t, map[string]Runnable{"d": d})
				res := runAsync(context.Background(), g)
				synctest.Wait()

				f.send(t, tt.first)
				synctest.Wait()
				if !isClosed(d.stopping) {
					t.Fatal("first signal did not begin the drain")
				}
				if got := f.exitCodes(); len(got) != 0 {
					t.Fatalf("first signal exited with %v", got)
				}
				if err := g.Ready(); err == nil || !strings.Contains(err.Error(), "received signal "+tt.first.String()) {
					t.Errorf("Ready = %v, want shutting down naming %v", err, tt.first)
				}

				f.send(t, tt.second)
				synctest.Wait()
				if got := f.exitCodes(); !slices.Equal(got, []int{tt.code}) {
					t.Errorf("exit codes = %v, want [%d]", got, tt.code)
				}
				// Exit returned (a test's recorder): Run goes on draining
				// and exits again on the next signal.
				f.send(t, syscall.SIGTERM)
				synctest.Wait()
				if got := f.exitCodes(); !slices.Equal(got, []int{tt.code, 143}) {
					t.Errorf("exit codes = %v, want [%d 143]", got, tt.code)
				}
				if err := <-res; err != nil {
					t.Errorf("Run = %v, want nil after the drain", err)
				}
				if f.stopped != 1 || f.installed {
					t.Errorf("signal handler: stopped %d times, installed %v; want released once", f.stopped, f.installed)
				}
			})
		})
	}
}

// Signals are counted, not shutdowns: the SIGTERM of a rolling deploy that
// arrives while a failed loop brings the group down is a first signal and
// does not exit.
func TestSignalDuringOwnShutdownCountsAsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrainLoop(time.Hour)
		g, f := newGroup(t, map[string]Runnable{
			"dies": RunnableFunc(func(context.Context) error { return errors.New("dead") }),
			"d":    d,
		})
		res := runAsync(context.Background(), g)
		synctest.Wait()
		if !isClosed(d.stopping) {
			t.Fatal("the failed loop did not begin the drain")
		}
		f.send(t, syscall.SIGTERM)
		synctest.Wait()
		if got := f.exitCodes(); len(got) != 0 {
			t.Fatalf("first signal after the group's own shutdown exited with %v", got)
		}
		f.send(t, syscall.SIGTERM)
		synctest.Wait()
		if got := f.exitCodes(); !slices.Equal(got, []int{143}) {
			t.Errorf("exit codes = %v, want [143]", got)
		}
		if les := loopErrors(<-res); len(les) != 1 || les["dies"] == nil {
			t.Errorf("loop errors = %v, want only dies", les)
		}
	})
}

// Run handles signals until every Shutdown call has returned, not only
// every Run: net/http.Server's Run returns at once and its Shutdown waits
// for the connections.
func TestSecondSignalWhileShutdownLingers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := &serverLoop{linger: time.Hour, closed: make(chan struct{})}
		g, f := newGroup(t, map[string]Runnable{"server": server})
		res := runAsync(context.Background(), g)
		synctest.Wait()
		f.send(t, syscall.SIGTERM)
		time.Sleep(time.Minute) // server's Run has returned; its Shutdown lingers
		f.send(t, syscall.SIGINT)
		synctest.Wait()
		if got := f.exitCodes(); !slices.Equal(got, []int{130}) {
			t.Errorf("exit codes = %v, want [130]", got)
		}
		if err := <-res; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}

func TestWhichSignals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		signals []os.Signal
		want    []os.Signal // nil: no handler installed
	}{
		{"nil means SIGTERM and SIGINT", nil, []os.Signal{syscall.SIGTERM, os.Interrupt}},
		{"custom", []os.Signal{syscall.SIGHUP}, []os.Signal{syscall.SIGHUP}},
		{"empty means none", []os.Signal{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g, f := newGroup(t, map[string]Runnable{"a": newBlockingLoop()})
				g.Signals = tc.signals
				ctx, cancel := context.WithCancel(context.Background())
				res := runAsync(ctx, g)
				synctest.Wait()
				f.mu.Lock()
				notified := slices.Clone(f.notified)
				f.mu.Unlock()
				if !slices.Equal(notified, tc.want) {
					t.Errorf("handled %v, want %v", notified, tc.want)
				}
				if tc.want != nil {
					f.send(t, tc.want[0])
				} else {
					cancel()
				}
				if err := <-res; err != nil {
					t.Errorf("Run = %v", err)
				}
				cancel()
			})
		})
	}
}

func TestSignalsValidation(t *testing.T) {
	a := newBlockingLoop()
	g, f := newGroup(t, map[string]Runnable{"a": a})
	g.Signals = []os.Signal{nil, syscall.SIGHUP, nil}
	err := g.Run(context.Background())
	want := "lifecycle: Signals[0]: want a signal such as syscall.SIGHUP, got nil\n" +
		"lifecycle: Signals[2]: want a signal such as syscall.SIGHUP, got nil"
	if !errors.Is(err, sqsloop.ErrInvalidArgument) || err.Error() != want {
		t.Fatalf("Run = %q, want sqsloop.ErrInvalidArgument reading %q", err, want)
	}
	if isClosed(a.started) || f.installed || g.live() {
		t.Error("Run with invalid Signals started something")
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
