package lifecycle

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
)

// LoopGroup runs several [Runnable] loops under one coordinated shutdown,
// in the style of errgroup: [LoopGroup.Run] starts each loop in a goroutine
// it owns and, when any loop returns, when its context is done, or when the
// attached [ShutdownCoordinator] begins shutdown, stops them all and waits
// for every one to return.
//
// Create one with [NewLoopGroup]; the zero value is also ready to use, with
// the defaults of a zero [GroupConfig]. A group runs once. All methods are
// safe for concurrent use.
type LoopGroup struct {
	cfg GroupConfig

	mu       sync.Mutex
	loops    []*loop
	started  bool // Run was called
	live     bool // Run is in progress
	draining bool // shutdown has begun
}

// loop is one added Runnable and its state during Run.
type loop struct {
	name   string
	r      Runnable
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned

	// Guarded by LoopGroup.mu.
	finished bool // Run returned
	asked    bool // the group asked it to stop before it returned

	// Written before done is closed (runErr) or by the Shutdown call
	// (shutdownErr); read only after the group waited for both.
	runErr      error
	shutdownErr error
}

// NewLoopGroup returns an empty group configured by cfg, after
// [GroupConfig.Validate]; on invalid input it returns nil and that error
// (wrapping [ErrInvalidConfig]).
func NewLoopGroup(cfg GroupConfig) (*LoopGroup, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &LoopGroup{cfg: cfg}, nil
}

// Add registers r under name, to be started by Run. name must be non-empty
// and unique in the group, since errors and probes report loops by name, and
// r must be non-nil; otherwise Add returns an error wrapping
// [ErrInvalidConfig]. Once Run has been called Add returns
// [ErrAlreadyRunning]: loops cannot join a running group.
func (g *LoopGroup) Add(name string, r Runnable) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.started:
		return fmt.Errorf("lifecycle: Add(%q): %w", name, ErrAlreadyRunning)
	case name == "":
		return fmt.Errorf("%w: LoopGroup.Add: name is empty; want a non-empty name unique in the group", ErrInvalidConfig)
	case r == nil:
		return fmt.Errorf("%w: LoopGroup.Add(%q): Runnable is nil", ErrInvalidConfig, name)
	}
	for _, l := range g.loops {
		if l.name == name {
			return fmt.Errorf("%w: LoopGroup.Add: name %q is already in the group; want a unique name", ErrInvalidConfig, name)
		}
	}
	g.loops = append(g.loops, &loop{name: name, r: r, done: make(chan struct{})})
	return nil
}

// Run starts every added loop, each in its own goroutine, and blocks until
// all of them have returned. Loops get a context that carries ctx's values
// but not its cancellation: the group decides when and in which order they
// stop.
//
// Shutdown begins at the first of: ctx is done; any loop returns (with an
// error or not); the attached coordinator begins shutdown. Then, in order:
// readiness turns false ([LoopGroup.Ready]); the coordinator, if any, is
// triggered; every loop still running is stopped, all concurrently — a
// [Shutdowner] gets Shutdown(ctx) with a context that carries Run's values
// but no deadline and keeps its Run context until its Run has returned,
// any other loop has its Run context cancelled at once. Run waits for every
// loop and every Shutdown call, however long they take (an obvious blocked
// call rather than a leaked goroutine), then returns. The group sets no
// drain budget: a loop that drains owns its own (a consumer's
// ShutdownTimeout); a second signal exits the process if a loop never
// returns.
//
// A loop whose Run returns nil on its own (not asked to stop) is done, not
// failed: it shuts the group down and Run reports nothing for it. That is
// how a finite job ends a group; a loop that must never end should return
// an error when it does.
//
// Run returns nil if every loop stopped cleanly, else the [*LoopError] of
// each failing loop joined with [errors.Join]: a Run error other than
// [context.Canceled] after the group asked the loop to stop, or a Shutdown
// error. A panic in a loop is recovered and
// reported as its error, with the stack. An empty group waits for ctx or
// the coordinator and returns nil. A second call returns [ErrAlreadyRunning]
// at once.
func (g *LoopGroup) Run(ctx context.Context) error {
	loops, err := g.start()
	if err != nil {
		return err
	}
	base := context.WithoutCancel(ctx)
	returned := make(chan *loop, len(loops))
	var wg sync.WaitGroup
	for _, l := range loops {
		lctx, cancel := context.WithCancel(base)
		l.cancel = cancel
		wg.Go(func() {
			err := runLoop(lctx, l.r)
			g.finish(l, err)
			returned <- l
		})
	}

	cause := g.awaitShutdown(ctx, returned)
	toStop := g.beginShutdown()
	if c := g.cfg.Coordinator; c != nil && cause != nil {
		c.trigger(cause)
	}
	stop(base, toStop, &wg)
	for _, l := range loops {
		l.cancel() // release every loop context, stopped or not
	}

	g.mu.Lock()
	g.live = false
	g.mu.Unlock()
	return collect(loops)
}

// start marks the group started and returns its loops, or
// ErrAlreadyRunning on a second call.
func (g *LoopGroup) start() ([]*loop, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return nil, ErrAlreadyRunning
	}
	g.started = true
	g.live = true
	return g.loops, nil
}

// runLoop calls r.Run, turning a panic into an error.
func runLoop(ctx context.Context, r Runnable) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return r.Run(ctx)
}

// finish records that l's Run returned err.
func (g *LoopGroup) finish(l *loop, err error) {
	g.mu.Lock()
	l.finished = true
	l.runErr = err
	g.mu.Unlock()
	close(l.done)
}

// awaitShutdown blocks until shutdown should begin and returns the cause to
// give the coordinator, or nil when the coordinator itself began it.
func (g *LoopGroup) awaitShutdown(ctx context.Context, returned <-chan *loop) error {
	var coordDone <-chan struct{}
	if c := g.cfg.Coordinator; c != nil {
		coordDone = c.Done()
	}
	select {
	case <-coordDone:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: loop group context ended: %v", ErrShutdown, context.Cause(ctx))
	case l := <-returned:
		if l.runErr != nil {
			return fmt.Errorf("%w: loop %q returned: %v", ErrShutdown, l.name, l.runErr)
		}
		return fmt.Errorf("%w: loop %q returned", ErrShutdown, l.name)
	}
}

// beginShutdown turns readiness off and returns the loops still running,
// marking them as asked to stop.
func (g *LoopGroup) beginShutdown() []*loop {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.draining = true
	var running []*loop
	for _, l := range g.loops {
		if !l.finished {
			l.asked = true
			running = append(running, l)
		}
	}
	return running
}
