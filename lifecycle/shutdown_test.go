package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// budgetLoop drains for drain after Shutdown, or until Shutdown's
// deadline, whichever is first (a consumer cancels its handlers then),
// and records that deadline.
type budgetLoop struct {
	*drainLoop
	deadline time.Time
}

func newBudgetLoop(drain time.Duration) *budgetLoop {
	return &budgetLoop{drainLoop: newDrainLoop(drain)}
}

func (b *budgetLoop) Shutdown(ctx context.Context) error {
	b.deadline, _ = ctx.Deadline()
	return b.drainLoop.Shutdown(ctx)
}

// Priority shutdown under one budget: a GracePeriod of 30 s gives the loops
// 27 s. A critical loop of long jobs (20 s left) and a background loop of
// short ones (3 s left, budget 5 s) are asked at once; the background loop
// is done at 3 s, the critical one at 20 s, within its 27 s; the server of
// the probes (Last) is asked only then, and Run returns. Stats and the log
// say which loop finished when.
func TestPriorityShutdownUnderOneBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		critical, background := newBudgetLoop(20*time.Second), newBudgetLoop(3*time.Second)
		var askedLast time.Time
		var criticalDoneWhenAsked bool
		server := &serverLoop{linger: 0, closed: make(chan struct{})}
		last := &shutdownHook{Runnable: server, shutdowner: server, hook: func() {
			askedLast, criticalDoneWhenAsked = time.Now(), isClosed(critical.returned)
		}}
		g := &LoopGroup{GracePeriod: 30 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		f := withFakeSignals(g)
		for _, add := range []error{
			g.Add("orders", critical),
			g.Add("thumbnails", background, LoopOption{Background: 5 * time.Second}),
			g.Add("http", last, LoopOption{Last: true}),
		} {
			if add != nil {
				t.Fatal(add)
			}
		}
		res := runAsync(context.Background(), g)
		synctest.Wait()
		t0 := time.Now()
		f.send(t, syscall.SIGTERM)
		if err := <-res; err != nil {
			t.Fatalf("Run = %v", err)
		}
		if d := critical.deadline.Sub(t0); d != 27*time.Second {
			t.Errorf("critical loop's deadline %v after shutdown began, want 27s (30s less 3s)", d)
		}
		if d := background.deadline.Sub(t0); d != 5*time.Second {
			t.Errorf("background loop's deadline %v, want its own 5s", d)
		}
		if askedLast.Sub(t0) != 20*time.Second || !criticalDoneWhenAsked {
			t.Errorf("the Last loop was asked %v after shutdown began (critical done: %v), want 20s, once the critical loop had returned",
				askedLast.Sub(t0), criticalDoneWhenAsked)
		}
		st := g.Stats()
		got := ""
		for _, l := range st.Loops {
			got += fmt.Sprintf("%s %s asked %v budget %v returned %v; ", l.Name, l.Class, l.Asked, l.Budget, l.Returned)
		}
		want := "orders critical asked 0s budget 27s returned 20s; " +
			"thumbnails background asked 0s budget 5s returned 3s; " +
			"http last asked 20s budget 27s returned 20s; "
		if got != want || st.Budget != 27*time.Second || !st.ShutdownBegan.Equal(t0) {
			t.Errorf("Stats:\n got %s\nwant %s (budget %v)", got, want, st.Budget)
		}
		out := logs.String()
		for _, line := range []string{
			`msg="lifecycle: shutdown began" cause="received signal terminated" budget=27s grace_period=30s`,
			`msg="lifecycle: loop stopped" loop=thumbnails class=background after=3s budget=5s`,
			`msg="lifecycle: loop stopped" loop=orders class=critical after=20s budget=27s`,
			`msg="lifecycle: group stopped" cause="received signal terminated" took=20s loops="orders (critical, budget 27s) 20s; thumbnails (background, budget 5s) 3s; http (last, budget 27s) 20s"`,
		} {
			if !strings.Contains(out, line) {
				t.Errorf("log lacks %s\n%s", line, out)
			}
		}
		t.Logf("timeline: %s", got)
	})
}

// shutdownHook calls hook when it is asked to Shutdown.
type shutdownHook struct {
	Runnable
	shutdowner
	hook func()
}

func (s *shutdownHook) Shutdown(ctx context.Context) error {
	s.hook()
	return s.shutdowner.Shutdown(ctx)
}

// A loop past the budget is logged with the loops still running, and a
// Last loop asked after the budget still gets lastGrace; without a
// GracePeriod, nothing gets a deadline but a Background loop. (A
// Shutdowner still draining at its deadline returns the deadline's error
// from Shutdown, net/http style: the group reports it, and cancels its Run
// context.)
func TestBudgetSpentAndNoBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		slow := RunnableFunc(func(context.Context) error { // ignores its context for an hour
			time.Sleep(time.Hour)
			return nil
		})
		last := newBudgetLoop(0)
		g := &LoopGroup{GracePeriod: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		f := withFakeSignals(g)
		_ = g.Add("slow", slow)
		_ = g.Add("http", last, LoopOption{Last: true})
		res := runAsync(context.Background(), g)
		synctest.Wait()
		t0 := time.Now()
		f.send(t, syscall.SIGTERM)
		if err := <-res; err != nil {
			t.Fatalf("Run = %v", err)
		}
		if !strings.Contains(logs.String(), `level=WARN msg="lifecycle: shutdown budget spent; loops still running" budget=8s loops="slow, http"`) {
			t.Errorf("no WARN line at the end of the budget:\n%s", logs.String())
		}
		if !strings.Contains(logs.String(), `level=WARN msg="lifecycle: loop stopped" loop=slow class=critical after=1h0m0s budget=8s`) {
			t.Errorf("the loop past its budget is not logged at WARN:\n%s", logs.String())
		}
		if d := last.deadline.Sub(t0); d != time.Hour+lastGrace {
			t.Errorf("the Last loop's deadline %v after shutdown began, want 1h1s (asked at 1h, lastGrace)", d)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		crit, bg := newBudgetLoop(time.Second), newBudgetLoop(time.Second)
		g, _ := newGroup(t, nil)
		_ = g.Add("crit", crit)
		_ = g.Add("bg", bg, LoopOption{Background: 3 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		synctest.Wait()
		t0 := time.Now()
		cancel()
		if err := <-res; err != nil {
			t.Fatalf("Run = %v", err)
		}
		if !crit.deadline.IsZero() || bg.deadline.Sub(t0) != 3*time.Second {
			t.Errorf("without GracePeriod: deadlines %v and %v after shutdown began, want none and 3s", crit.deadline.Sub(t0), bg.deadline.Sub(t0))
		}
	})
}

func TestShutdownBudget(t *testing.T) {
	for p, want := range map[time.Duration]time.Duration{
		30 * time.Second:  27 * time.Second,
		120 * time.Second: 108 * time.Second,
		10 * time.Second:  8 * time.Second,
		3 * time.Second:   1500 * time.Millisecond,
	} {
		if got := shutdownBudget(p); got != want {
			t.Errorf("shutdownBudget(%v) = %v, want %v", p, got, want)
		}
	}
}

// Bad options and a negative GracePeriod are refused, naming the field.
func TestPriorityOptionsValidation(t *testing.T) {
	var g LoopGroup
	for _, err := range []error{
		g.Add("a", newBlockingLoop(), LoopOption{Background: -time.Second}),
		g.Add("b", newBlockingLoop(), LoopOption{Background: time.Second, Last: true}),
	} {
		if !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("Add = %v, want sqsloop.ErrInvalidArgument", err)
		}
	}
	g = LoopGroup{GracePeriod: -time.Second, Signals: []os.Signal{}}
	if err := g.Run(context.Background()); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "GracePeriod") {
		t.Errorf("Run with GracePeriod -1s = %v, want sqsloop.ErrInvalidArgument naming GracePeriod", err)
	}
}
