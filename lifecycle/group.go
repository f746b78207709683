package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// LoopGroup runs several [Runnable] loops under one coordinated shutdown:
// [LoopGroup.Run] starts each loop in a goroutine it owns, begins shutdown
// at the first SIGTERM or SIGINT, when its context is done, or when any loop
// returns, then stops every loop and waits for all of them. A second signal
// during that drain exits the process at once, as users expect from Ctrl+C
// twice, after giving the loops that have an Interrupt method (see
// [Runnable]) at most [InterruptTimeout] (1 s) for a last word.
//
// The zero value is ready to use: [LoopGroup.Add] the loops, then call Run
// once. Set its fields, if at all, before Run (AllowRemoteDrain before
// DrainHandler serves a request) and leave them alone while it runs. All
// methods are safe for concurrent use. A LoopGroup must
// not be copied after first use.
type LoopGroup struct {
	// Signals begin shutdown while Run runs. Nil means SIGTERM (what
	// Kubernetes, systemd and ECS send to stop a process) and SIGINT
	// (Ctrl+C); an empty non-nil slice means none: only Run's context and
	// the loops end the group. Entries must not be nil. Under
	// testing/synctest use an empty slice: os/signal cannot be used from
	// inside a synctest bubble.
	Signals []os.Signal

	// Exit is called, on Run's goroutine, when a second signal arrives
	// while Run runs; nil means [os.Exit]. The code is 128 plus the signal
	// number for a [syscall.Signal] (130 for SIGINT, 143 for SIGTERM, as
	// shells report a process killed by that signal), else 1. If Exit
	// returns (a test's recorder), Run goes on draining and calls it again
	// on every further signal.
	Exit func(code int)

	// GracePeriod is the time the platform gives the process between its
	// SIGTERM and its SIGKILL: ECS's stopTimeout, Kubernetes's
	// terminationGracePeriodSeconds (30 s by default on both). Set it to
	// the platform's number and it is the one place the drain budget is
	// set: when shutdown begins, the loops get the budget, GracePeriod
	// less a margin for what follows a drain (its last calls, flushing
	// telemetry, the exit: a tenth of GracePeriod, at least 2 s, at most
	// half of it; 27 s of 30 s), as a deadline on their Shutdown context
	// (a consumer with its ShutdownTimeout left zero takes it as its
	// budget); a [ClassBackground] loop a shorter one. Zero (the default): the
	// group sets no budget; a loop that drains owns its own. Must be ≥ 0;
	// Run reports a negative one (wrapping [sqsloop.ErrInvalidArgument]).
	GracePeriod time.Duration

	// AllowRemoteDrain lets any client call [LoopGroup.DrainHandler].
	// False (the default): only clients on a loopback address
	// (127.0.0.0/8, ::1) or a Unix socket; others get 403. Behind a proxy
	// on the same host every client looks local: guard the route there.
	AllowRemoteDrain bool

	// Logger receives the group's records: shutdown began (why, the
	// budget), each loop stopped (when, its budget, its error), the
	// budget spent with loops still running, and the group stopped (the
	// timeline: which loop finished when). Nil means slog.Default().
	Logger *slog.Logger

	// notify and stopNotify, when set, replace signal.Notify and
	// signal.Stop, so tests can feed signals without sending them.
	notify     func(c chan<- os.Signal, sig ...os.Signal)
	stopNotify func(c chan<- os.Signal)

	mu       sync.Mutex
	loops    []*loop
	started  bool      // Run was called
	running  bool      // Run is in progress
	stopping string    // why shutdown began; empty until it has
	began    time.Time // when shutdown began
	budget   time.Duration
}

// loop is one added Runnable and its state during Run.
type loop struct {
	name   string
	r      Runnable
	class  string        // ClassCritical, ClassBackground or ClassLast
	budget time.Duration // LoopOption.Background
	cancel context.CancelCauseFunc

	// Guarded by LoopGroup.mu.
	finished bool      // Run returned
	asked    bool      // the group asked it to stop before it returned
	askedAt  time.Time // when it was asked to stop
	stopBy   time.Time // its deadline; zero: none
	ended    time.Time // when its Run returned

	// Written under LoopGroup.mu by the loop's Run goroutine (runErr) and
	// its Shutdown call (shutdownErr), before they report to Run's
	// goroutine.
	runErr, shutdownErr error
}

// Add registers r under name, to be started by Run, a [ClassCritical] loop
// unless an option says otherwise ([LoopOption]; the last one given
// counts). name must be
// non-empty and unique in the group, since errors and probes report loops
// by name, r must be non-nil, and options valid; otherwise Add returns an
// error naming the argument ("lifecycle: name: want …, got …") that wraps
// [sqsloop.ErrInvalidArgument]. Once Run has been called Add returns an
// error wrapping [sqsloop.ErrAlreadyRunning]: loops cannot join a running
// group.
func (g *LoopGroup) Add(name string, r Runnable, opts ...LoopOption) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.started:
		return errAlreadyRunning
	case name == "":
		return &invalidArgument{"name", "a non-empty name", `""`}
	case r == nil:
		return &invalidArgument{"r", fmt.Sprintf("a non-nil Runnable for loop %q", name), "nil"}
	}
	for _, l := range g.loops {
		if l.name == name {
			return &invalidArgument{"name", "a name not yet in the group", strconv.Quote(name)}
		}
	}
	l := &loop{name: name, r: r, class: ClassCritical}
	for _, opt := range opts {
		if err := opt.apply(l); err != nil {
			return err
		}
	}
	g.loops = append(g.loops, l)
	return nil
}

// Run handles the group's Signals, starts every added loop in its own
// goroutine, and blocks until all of them have returned. Loops get a context
// that carries ctx's values but not its cancellation: the group decides when
// they stop.
//
// Shutdown begins at the first of: a signal; ctx is done; any loop returns
// (with an error or not). Readiness ([LoopGroup.Ready]) turns false at once,
// before any loop is asked to stop; then every loop still running is asked,
// all at once, but for [ClassLast] loops, which are asked once every other
// loop has returned (so the health probes such a loop serves answer
// through the drain). A loop with a Shutdown method (see [Runnable]) gets Shutdown(ctx) with a context that carries
// ctx's values and, as its deadline, its share of the budget: with a
// GracePeriod, the group's budget (a [ClassBackground] loop's own when
// that is shorter, a ClassLast loop at least 1 s); without one, none (a
// ClassBackground loop's own). Its Run context is left alone (unless Shutdown fails, which
// cancels it). Any other loop has its Run context cancelled. The cancelled
// context's [context.Cause] says why shutdown began and wraps
// [context.Canceled]. The group enforces no deadline: a loop that drains
// returns on its own (a consumer within its budget), the group logs the
// loops still running when its budget is spent, and a second signal exits
// the process if one never returns. Run waits for every loop and every
// Shutdown call, however long they take (an obvious blocked call rather
// than a leaked goroutine), logs the timeline of the shutdown (see
// [LoopGroup.Stats]), stops handling the signals, and returns.
//
// Signals are counted, not shutdowns: the first one Run receives begins
// shutdown (or lets one begun for another reason go on, as for a deploy's
// SIGTERM while a failed loop brings the group down); the second gives the
// loops that have an Interrupt method their Interrupt call (waiting
// [InterruptTimeout] at most), then calls Exit; every later one calls Exit.
//
// A loop whose Run returns nil on its own (not asked to stop) is done, not
// failed: it shuts the group down and Run reports nothing for it. That is
// how a finite job ends a group; a loop that must never end should return
// an error when it does.
//
// Run returns nil if every loop stopped cleanly, else an error per failing
// loop, joined with [errors.Join], that reads "lifecycle: loop NAME: ERR"
// and wraps ERR (errors.Is and errors.As see through it): a Run error
// other than [context.Canceled] after the group asked the loop to stop, or
// a Shutdown error. [LoopGroup.Stats] gives each loop's error by name
// (LoopStats.Err). A panic in a loop's Run or Shutdown is recovered and
// reported as its error, with the stack. An empty group waits for a signal
// or ctx and returns nil. A second call returns an error wrapping
// [sqsloop.ErrAlreadyRunning] at once. If Signals holds a nil entry or
// GracePeriod is negative, Run starts nothing and returns an error per
// problem ("lifecycle: Signals[i]: want …, got nil"), joined, that wraps
// [sqsloop.ErrInvalidArgument].
func (g *LoopGroup) Run(ctx context.Context) error {
	signals, err := g.signals()
	if err != nil {
		return err
	}
	loops, err := g.start()
	if err != nil {
		return err
	}
	exit, notify, stopNotify := g.Exit, g.notify, g.stopNotify
	if exit == nil {
		exit = os.Exit
	}
	if notify == nil {
		notify, stopNotify = signal.Notify, signal.Stop
	}
	sigs := make(chan os.Signal, 2) // room for the first and the second
	if len(signals) > 0 {
		notify(sigs, signals...)
	}

	base := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	returned := make(chan *loop, len(loops))        // a loop's Run returned
	shutdownDone := make(chan struct{}, len(loops)) // a Shutdown call returned
	for _, l := range loops {
		lctx, cancel := context.WithCancelCause(base)
		l.cancel = cancel
		wg.Go(func() {
			err := protect(func() error { return l.r.Run(lctx) })
			g.mu.Lock()
			l.finished, l.runErr, l.ended = true, err, time.Now()
			g.mu.Unlock()
			returned <- l
		})
	}

	var cause error // set once shutdown has begun
	running, shutdowns, signalled := len(loops), 0, 0
	lastAsked := false
	done := ctx.Done()
	var spent <-chan time.Time // fires when the group's budget is spent
	var spentTimer *time.Timer
	for cause == nil || running > 0 || shutdowns > 0 {
		var why string
		select {
		case sig := <-sigs:
			if signalled++; signalled > 1 {
				if signalled == 2 {
					g.interrupt(base)
				}
				exit(exitCode(sig))
			}
			why = "received signal " + sig.String()
		case <-done:
			done = nil
			why = fmt.Sprintf("Run's context ended (%v)", context.Cause(ctx))
		case l := <-returned:
			running--
			why = fmt.Sprintf("loop %q returned", l.name)
			if l.runErr != nil {
				why = fmt.Sprintf("loop %q failed", l.name)
			}
			if cause != nil {
				g.logStopped(l)
			}
		case <-shutdownDone:
			shutdowns--
		case <-spent:
			spent = nil
			g.logSpent()
		}
		if why != "" && cause == nil {
			cause = stopCause(why)
			if budget := g.begin(why); budget > 0 {
				spentTimer = time.NewTimer(budget)
				spent = spentTimer.C
			}
			shutdowns += g.stop(base, cause, &wg, shutdownDone, false)
		}
		if cause != nil && !lastAsked && g.othersDone() {
			lastAsked = true
			shutdowns += g.stop(base, cause, &wg, shutdownDone, true)
		}
	}

	if spentTimer != nil {
		spentTimer.Stop()
	}
	if len(signals) > 0 {
		stopNotify(sigs)
	}
	for _, l := range loops {
		l.cancel(cause) // release every loop context, stopped or not
	}
	wg.Wait()
	g.mu.Lock()
	g.running = false
	g.mu.Unlock()
	g.logTimeline()
	return collect(loops)
}

// signals returns the signals Run handles, or an error naming each nil
// entry of Signals, and a negative GracePeriod.
func (g *LoopGroup) signals() ([]os.Signal, error) {
	var errs []error
	if g.GracePeriod < 0 {
		errs = append(errs, &invalidArgument{"GracePeriod", "0 (no budget) or the platform's grace, such as 30s", g.GracePeriod.String()})
	}
	for i, s := range g.Signals {
		if s == nil {
			errs = append(errs, &invalidArgument{fmt.Sprintf("Signals[%d]", i), "a signal such as syscall.SIGHUP", "nil"})
		}
	}
	if g.Signals == nil {
		return []os.Signal{syscall.SIGTERM, os.Interrupt}, errors.Join(errs...)
	}
	return g.Signals, errors.Join(errs...)
}

// start marks the group started and returns its loops, or
// errAlreadyRunning on a second call.
func (g *LoopGroup) start() ([]*loop, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return nil, errAlreadyRunning
	}
	g.started = true
	g.running = true
	return g.loops, nil
}

// stop asks every loop still running to stop, those of ClassLast if last
// is set, the others if not: one with a Shutdown method by a Shutdown call, with its
// deadline, on a goroutine of wg that reports on done; any other loop by
// cancelling its Run context with cause. It returns how many Shutdown
// calls it started.
func (g *LoopGroup) stop(base context.Context, cause error, wg *sync.WaitGroup, done chan<- struct{}, last bool) int {
	g.mu.Lock()
	now := time.Now()
	var toStop []*loop
	for _, l := range g.loops {
		if !l.finished && (l.class == ClassLast) == last {
			l.asked, l.askedAt, l.stopBy = true, now, g.deadline(l, now)
			toStop = append(toStop, l)
		}
	}
	g.mu.Unlock()
	calls := 0
	for _, l := range toStop {
		sd, ok := l.r.(shutdowner)
		if !ok {
			l.cancel(cause)
			continue
		}
		calls++
		wg.Go(func() {
			ctx, cancel := base, context.CancelFunc(func() {})
			if !l.stopBy.IsZero() {
				ctx, cancel = context.WithDeadline(base, l.stopBy)
			}
			defer cancel()
			err := protect(func() error { return sd.Shutdown(ctx) })
			if err != nil {
				l.cancel(cause) // Shutdown failed: fall back to the Run context
			}
			g.mu.Lock()
			l.shutdownErr = err
			g.mu.Unlock()
			done <- struct{}{}
		})
	}
	return calls
}

// othersDone reports whether every loop not of ClassLast has returned.
func (g *LoopGroup) othersDone() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, l := range g.loops {
		if l.class != ClassLast && !l.finished {
			return false
		}
	}
	return true
}

// interrupt calls Interrupt on every loop still running that implements
// an Interrupt method, at once, with a context that ends after InterruptTimeout,
// and waits for them until then at most: the process exits next. A panic
// in Interrupt is recovered and ignored. A call still running at the
// deadline is left to the process's exit (or, with an Exit that returns, to
// finish on its own).
func (g *LoopGroup) interrupt(base context.Context) {
	g.mu.Lock()
	var ints []interrupter
	for _, l := range g.loops {
		if i, ok := l.r.(interrupter); ok && !l.finished {
			ints = append(ints, i)
		}
	}
	g.mu.Unlock()
	if len(ints) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(base, InterruptTimeout)
	defer cancel()
	done := make(chan struct{}, len(ints))
	for _, i := range ints {
		go func() {
			defer func() { done <- struct{}{} }()
			_ = protect(func() error { i.Interrupt(ctx); return nil })
		}()
	}
	for range ints {
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}

// protect calls f, turning a panic into an error that carries the stack.
func protect(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return f()
}

// collect builds Run's result from the loops' recorded outcomes.
func collect(loops []*loop) error {
	var errs []error
	for _, l := range loops {
		if err := l.err(); err != nil {
			errs = append(errs, fmt.Errorf("lifecycle: loop %q: %w", l.name, err))
		}
	}
	return errors.Join(errs...)
}

// err is what went wrong with l: its Run error (unless it stopped cleanly:
// nil, or context.Canceled once the group had asked it to stop) and its
// Shutdown error, joined; nil when nothing did. Called with g.mu held, or
// once every loop and Shutdown call has returned.
func (l *loop) err() error {
	var why []error
	if l.runErr != nil && !(l.asked && errors.Is(l.runErr, context.Canceled)) {
		why = append(why, l.runErr)
	}
	if l.shutdownErr != nil {
		why = append(why, fmt.Errorf("shutdown: %w", l.shutdownErr))
	}
	if len(why) == 1 {
		return why[0]
	}
	return errors.Join(why...)
}

// stopCause is the cause of the loops' cancelled contexts: why shutdown
// began. It wraps context.Canceled, so a loop returning context.Cause(ctx)
// stops cleanly.
type stopCause string

func (c stopCause) Error() string { return "lifecycle: shutting down: " + string(c) }
func (c stopCause) Unwrap() error { return context.Canceled }

// exitCode is the conventional status of a process killed by sig: 128 plus
// the signal number (SIGINT 2 → 130, SIGTERM 15 → 143), or 1 for a signal
// that has no number.
func exitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok && s > 0 {
		return 128 + int(s)
	}
	return 1
}
