package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/failurelog"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// ErrDrainTimeout is the cause (context.Cause) of a handler context
// cancelled because the drain budget (Config.ShutdownTimeout, or the
// context given to Shutdown) ran out, and what the error Run then returns
// wraps (errors.Is).
var ErrDrainTimeout = errors.New("consumer: drain budget exhausted")

// state of a Consumer.
const (
	stateNew int32 = iota
	stateRunning
	stateDraining
	stateStopped
)

// Consumer receives messages from one Mailbox and runs an sqsloop.Handler
// for each. Create it with New; its methods are safe for concurrent use.
type Consumer struct {
	mb      sqsloop.Mailbox
	cfg     Config
	handler sqsloop.Handler
	leases  *leases.Manager
	intake  *intake
	st      counters
	health  health
	backoff receiveBackoff
	pause   pauseSwitch  // drain mode without exit (pause.go)
	onWire  atomic.Int64 // receive calls on the wire, or back with messages not held yet (Paused)
	idle    idleClock    // Config.ExitWhenIdle (idle.go)

	vtFrom       string // where the visibility timeout comes from: "config", "queue", "default"; "" until Run reads the queue's
	state        atomic.Int32
	drainReq     chan struct{} // closed by Shutdown
	drainOne     sync.Once
	cutShort     chan struct{} // closed when Shutdown's context ends before Run: the drain budget is spent
	cutOne       sync.Once
	spentByCtx   atomic.Bool // the drain budget ended with Shutdown's context: its handlers were cancelled
	budget       drainBudget // when the drain budget ends (drain.go)
	interrupted  context.Context
	interrupt    context.CancelFunc // ends interrupted: Interrupt was called, the flush ends
	receivesOver chan struct{}      // closed once no receive call is in flight any more (the drain began)
	done         chan struct{}      // closed when Run returns

	waiting   waiting  // FIFO sequences with messages waiting behind a running one
	obs       observed // handlers running, with Config.Observer
	drainMark Stats    // counts when the drain began: set by the receive watcher, read by Run after it ended

	dead     *rules.DeadLetters // the dead-letter queue of Permanent failures (poison.go), whose counts scale.go reads
	failures *failurelog.Log    // the WARN lines of failed handler runs, rate-limited
}

// New returns a Consumer of mb that runs h for each message. It returns the
// errors of cfg.Validate (each naming its field and range) for an invalid
// cfg, and an error wrapping sqsloop.ErrInvalidArgument for a nil mb or h.
func New(mb sqsloop.Mailbox, h sqsloop.Handler, cfg Config) (*Consumer, error) {
	var errs []error
	if mb == nil {
		errs = append(errs, fmt.Errorf("mailbox: must not be nil: %w", sqsloop.ErrInvalidArgument))
	}
	if h == nil {
		errs = append(errs, fmt.Errorf("handler: must not be nil: %w", sqsloop.ErrInvalidArgument))
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	byContext := cfg.ShutdownTimeout == 0 // Shutdown's deadline, when it has one, is the budget
	vtFrom := ""                          // read by Run
	if cfg.VisibilityTimeout > 0 {
		vtFrom = "config"
	}
	cfg = cfg.withDefaults()
	owner, err := leases.New(mb, cfg.Visibility, cfg.Logger)
	if err != nil {
		return nil, err
	}
	interrupted, interrupt := context.WithCancel(context.Background())
	return &Consumer{
		mb:           mb,
		cfg:          cfg,
		handler:      rules.Wrap(h, cfg.Logger, cfg.Middleware),
		leases:       owner,
		dead:         rules.NewDeadLetters(mb),
		failures:     failurelog.New(cfg.Logger, "consumer"),
		intake:       newIntake(cfg.Concurrency),
		drainReq:     make(chan struct{}),
		cutShort:     make(chan struct{}),
		receivesOver: make(chan struct{}),
		done:         make(chan struct{}),
		budget:       drainBudget{timeout: cfg.ShutdownTimeout, byContext: byContext, moved: make(chan struct{}, 1)},
		interrupted:  interrupted,
		interrupt:    interrupt,
		vtFrom:       vtFrom,
	}, nil
}

// Shutdown begins the drain and waits for Run to return, like
// net/http.Server.Shutdown: receiving stops, unstarted messages are given
// back once the receive calls in flight are back (at most 250 ms),
// in-flight handlers finish. A deadline on ctx bounds the drain budget:
// it is the budget when Config.ShutdownTimeout is left zero (a
// lifecycle.LoopGroup with a GracePeriod gives each loop its share that
// way), and shortens a ShutdownTimeout that ends later. If ctx is done
// first, the drain budget is spent: the in-flight handlers' contexts are
// cancelled (cause ErrDrainTimeout; not before those receives are back),
// after DrainGrace their messages are given back, and Shutdown returns
// ctx's error while Run completes (ctx's error too when Run returned at
// the moment ctx ended, its handlers cancelled by it). Shutdown before Run
// makes a later Run return at once; after Run it returns nil. Only the
// first call's deadline counts.
func (c *Consumer) Shutdown(ctx context.Context) error {
	if d, ok := ctx.Deadline(); ok {
		c.budget.limit(d)
	}
	c.drainOne.Do(func() { close(c.drainReq) })
	c.state.CompareAndSwap(stateRunning, stateDraining)
	if c.state.Load() == stateNew {
		return nil
	}
	select {
	case <-c.done:
		// Run may return at the instant ctx ends, its handlers cancelled by
		// that very deadline, before ctx's own timer has fired.
		if c.spentByCtx.Load() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
				return context.DeadlineExceeded
			}
		}
		return nil
	case <-ctx.Done():
		c.cutOne.Do(func() { close(c.cutShort) })
		return ctx.Err()
	}
}

// Run receives and handles messages until ctx is cancelled, Shutdown is
// called, or the queue fails for good; then it drains (see the package
// doc) and returns once every goroutine it started has stopped — but for
// handlers that ignore their cancelled context past DrainGrace, which are
// left to the process's exit — and every message it received is acked or
// given back.
//
// It returns nil after a drain asked for by ctx or Shutdown that finished
// within the budget; an error wrapping ErrDrainTimeout, saying how many
// handlers were cancelled and how many abandoned, when the budget ran out;
// the mailbox's error when the queue failed for good (wrapping
// sqsloop.ErrMailboxClosed, sqsloop.ErrQueueNotFound,
// sqsloop.ErrInvalidArgument, or sqsloop.ErrAccessDenied after
// visibility.MaxAccessDenied consecutive denied calls of one kind); and
// sqsloop.ErrAlreadyRunning if Run was called before (a Consumer runs once).
func (c *Consumer) Run(ctx context.Context) error {
	if !c.state.CompareAndSwap(stateNew, stateRunning) {
		return fmt.Errorf("consumer: Run called twice: %w", sqsloop.ErrAlreadyRunning)
	}
	defer close(c.done)
	defer c.state.Store(stateStopped)
	defer c.dead.Close()
	defer c.failures.Flush()

	var attrs sqsloop.QueueAttributes // read at start-up already, for the check
	adopted, read := c.vtFrom == "", false
	if adopted {
		var err error
		if attrs, read, err = c.adoptQueueTimeout(ctx); err != nil {
			return err
		}
	}
	c.logStart()
	c.idle.reset(time.Now())

	// Handlers and the lease owner outlive ctx's cancellation (that is
	// the drain), but keep its values.
	base := context.WithoutCancel(ctx)
	handlerCtx, cancelHandlers := context.WithCancelCause(base)
	defer cancelHandlers(nil)

	leasesDone := make(chan struct{})
	go func() { defer close(leasesDone); _ = c.leases.Run(base) }() // ended by stopLeases

	checkCtx, stopCheck := context.WithCancel(ctx)
	checkDone := make(chan struct{})
	go func() { defer close(checkDone); c.watchQueue(checkCtx, attrs, read, adopted) }()

	handlers := newPool(c.cfg.Concurrency, c.cfg.Concurrency+maxAhead, func(s *sequence) {
		defer c.intake.release(len(s.msgs))
		c.process(s)
	})

	idleDone := make(chan struct{})
	if c.cfg.ExitWhenIdle > 0 {
		go func() { defer close(idleDone); c.watchIdle(c.receivesOver) }()
	} else {
		close(idleDone)
	}

	drainBegan, runErr := c.receive(ctx, handlerCtx, handlers)
	close(c.receivesOver)
	<-idleDone
	c.state.Store(stateDraining)
	stopCheck()
	<-checkDone

	c.giveBackUnstarted(handlers) // sequences submitted while the drain began
	handlers.close()
	drainErr := c.awaitHandlers(handlers, cancelHandlers, drainBegan)
	c.stopLeases(drainBegan)
	<-leasesDone
	c.drainEnded(drainBegan, drainErr)
	return errors.Join(runErr, drainErr)
}

// Stats returns the consumer's counters. Safe for concurrent use.
func (c *Consumer) Stats() Stats {
	s := Stats{Stats: c.leases.Stats()}
	s.Received, s.Redelivered = c.st.received.Load(), c.st.redelivered.Load()
	s.Started, s.Succeeded, s.Failed = c.st.started.Load(), c.st.succeeded.Load(), c.st.failed.Load()
	s.Panics, s.Abandoned = c.st.panics.Load(), c.st.abandoned.Load()
	s.ReceiveCalls, s.ReceiveErrors = c.st.receiveCalls.Load(), c.st.receiveErrors.Load()
	s.Poisoned = c.st.poisoned.Load()
	return s
}
