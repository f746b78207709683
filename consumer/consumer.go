package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

var (
	// ErrAlreadyStarted is returned by a second call to Run: a Consumer runs
	// once.
	ErrAlreadyStarted = errors.New("consumer: Run already called")

	// ErrDrainTimeout is the cause (context.Cause) of a handler context
	// cancelled because the drain budget (Config.ShutdownTimeout, or the
	// context given to Shutdown) ran out.
	ErrDrainTimeout = errors.New("consumer: drain budget exhausted")
)

// state of a Consumer.
const (
	stateNew int32 = iota
	stateRunning
	stateDraining
	stateStopped
)

// Consumer receives messages from one Mailbox and runs a Handler for each.
// Create it with New; its methods are safe for concurrent use.
type Consumer struct {
	mb      sqsloop.Mailbox
	cfg     Config
	handler Handler
	ext     *visibility.Extender
	st      counters

	state    atomic.Int32
	drainReq chan struct{} // closed by Shutdown
	drainOne sync.Once
	done     chan struct{} // closed when Run returns

	waiting waiting // FIFO runs with messages waiting behind a running one

	mu             sync.Mutex
	cancelHandlers context.CancelCauseFunc // set while Run runs
}

// New returns a Consumer of mb that runs h for each message. It returns the
// errors of cfg.Validate (each naming its field and range) for an invalid
// cfg, and an error wrapping sqsloop.ErrInvalidArgument for a nil mb or h.
func New(mb sqsloop.Mailbox, h Handler, cfg Config) (*Consumer, error) {
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
	cfg = cfg.withDefaults()
	ext, err := visibility.New(mb, cfg.Visibility)
	if err != nil {
		return nil, err
	}
	mws := append([]Middleware{Recover(cfg.Logger), Backoff(cfg.Backoff)}, cfg.Middleware...)
	return &Consumer{
		mb:       mb,
		cfg:      cfg,
		handler:  Chain(h, mws...),
		ext:      ext,
		drainReq: make(chan struct{}),
		done:     make(chan struct{}),
	}, nil
}

// Running reports whether Run is receiving: false before Run, from the
// moment shutdown begins (while the drain is still going on), and after Run
// returns.
func (c *Consumer) Running() bool { return c.state.Load() == stateRunning }

// Stats returns the consumer's counters. Safe for concurrent use.
func (c *Consumer) Stats() Stats {
	es := c.ext.Stats()
	return Stats{
		Received: c.st.received.Load(), Redelivered: c.st.redelivered.Load(),
		Started: c.st.started.Load(), Succeeded: c.st.succeeded.Load(), Failed: c.st.failed.Load(),
		Panics: c.st.panics.Load(), Acked: c.st.acked.Load(), AckFailed: c.st.ackFailed.Load(),
		Nacked: c.st.nacked.Load(), NackFailed: c.st.nackFailed.Load(), DrainNacked: c.st.drainNacked.Load(),
		ReceiveCalls: c.st.receiveCalls.Load(), ReceiveErrors: c.st.receiveErrors.Load(),
		Extensions: es.Extended, ExtensionCalls: es.Calls, LargestExtensionBatch: es.LargestBatch,
		LeasesLost: es.Lost,
	}
}

// Shutdown begins the drain and waits for Run to return, like
// net/http.Server.Shutdown: receiving stops, unstarted messages are nacked at
// once, in-flight handlers finish. If ctx is done first, the in-flight
// handlers' contexts are cancelled (cause ErrDrainTimeout; their messages are
// nacked) and Shutdown returns ctx's error while Run completes. Shutdown
// before Run makes a later Run return at once; after Run it returns nil.
func (c *Consumer) Shutdown(ctx context.Context) error {
	c.drainOne.Do(func() { close(c.drainReq) })
	c.state.CompareAndSwap(stateRunning, stateDraining)
	if c.state.Load() == stateNew {
		return nil
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		c.cancelInFlight()
		return ctx.Err()
	}
}

func (c *Consumer) cancelInFlight() {
	c.mu.Lock()
	cancel := c.cancelHandlers
	c.mu.Unlock()
	if cancel != nil {
		cancel(ErrDrainTimeout)
	}
}

// Run receives and handles messages until ctx is cancelled, Shutdown is
// called, or the mailbox fails for good (closed, queue not found); then it
// drains (see the package doc) and returns once every goroutine it started
// has stopped and every message it received is acked or given back. It
// returns nil after a drain asked for by ctx or Shutdown; the receive's error
// when the mailbox failed for good (it wraps sqsloop.ErrMailboxClosed,
// sqsloop.ErrQueueNotFound or sqsloop.ErrInvalidArgument); and
// ErrAlreadyStarted if Run was called before.
func (c *Consumer) Run(ctx context.Context) error {
	if !c.state.CompareAndSwap(stateNew, stateRunning) {
		return ErrAlreadyStarted
	}
	defer close(c.done)
	defer c.state.Store(stateStopped)
	c.checkQueue(ctx)

	// Handlers, acks and the extender outlive ctx's cancellation (that is
	// the drain), but keep its values.
	base := context.WithoutCancel(ctx)
	handlerCtx, cancelHandlers := context.WithCancelCause(base)
	defer cancelHandlers(nil)
	c.mu.Lock()
	c.cancelHandlers = cancelHandlers
	c.mu.Unlock()

	extCtx, stopExt := context.WithCancel(base)
	extDone := make(chan struct{})
	go func() { defer close(extDone); _ = c.ext.Run(extCtx) }()

	set := newSettler(base, c.mb, c.cfg.AckWindow, c.cfg.Logger, &c.st)

	free := newSlots(c.cfg.Concurrency)
	handlers := newPool(c.cfg.Concurrency, func(r *run) {
		defer free.release(len(r.msgs))
		c.process(handlerCtx, r, set)
	})

	drainBegan, runErr := c.receive(ctx, base, handlerCtx, free, handlers)
	c.state.Store(stateDraining)

	c.giveBackWaiting(base) // runs submitted while the drain began
	handlers.close()
	c.awaitHandlers(handlers, c.cfg.ShutdownTimeout-time.Since(drainBegan), stopExt)
	set.close()
	stopExt()
	<-extDone
	return runErr
}

// receive runs the receive loops until the drain begins: ctx done,
// Shutdown called, or a loop failing for good (its error is returned). It
// returns once every loop has stopped, with the moment the drain began.
// Receive calls in flight then get receiveGrace to come back, so that
// messages SQS already handed out are given back rather than left hidden
// for their visibility timeout.
func (c *Consumer) receive(ctx, base, handlerCtx context.Context, free slots, handlers *pool) (drainBegan time.Time, err error) {
	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	receivers, rctx := errgroup.WithContext(recvCtx)
	callCtx, cancelCalls := context.WithCancel(base)
	defer cancelCalls()
	receiversDone := make(chan struct{})
	watchDone := make(chan struct{})
	// drainBegan is set by the watcher; read after watchDone.
	go func() {
		defer close(watchDone)
		select {
		case <-c.drainReq:
		case <-rctx.Done():
		}
		c.state.CompareAndSwap(stateRunning, stateDraining) // Running() turns false at once
		drainBegan = time.Now()
		stopRecv()
		c.giveBackWaiting(base)
		grace := time.NewTimer(receiveGrace)
		defer grace.Stop()
		select {
		case <-grace.C:
			cancelCalls()
		case <-receiversDone:
		}
	}()
	// Several receives in flight: a receive holds its slots for a round
	// trip, so the next one gathers while it is on the wire.
	token := make(chan struct{}, 1)
	token <- struct{}{}
	for range c.receivers() {
		receivers.Go(func() error { return c.receiveLoop(rctx, callCtx, handlerCtx, free, token, handlers) })
	}
	err = receivers.Wait()
	close(receiversDone)
	stopRecv()
	<-watchDone
	return drainBegan, err
}

// receiveGrace is how long a receive call in flight when shutdown begins may
// take to come back (its messages are then given back at once) before it is
// abandoned: an abandoned call's messages stay hidden for their visibility
// timeout. 100 ms covers an answer already on the wire from an in-region
// SQS endpoint without holding every drain up for a long poll's full wait.
const receiveGrace = 100 * time.Millisecond

// maxReceivers bounds the receive calls a consumer has in flight at once.
const maxReceivers = 16

// receivers is how many receive loops run: one per full batch
// (MaxMessages) of handler slots, plus one to gather the next batch while
// the others' receives are on the wire; at most maxReceivers, and one when
// a single handler slot leaves nothing to overlap. Each asks for full
// batches, so requests per message stay at their floor.
func (c *Consumer) receivers() int {
	if c.cfg.Concurrency == 1 {
		return 1
	}
	return min(c.cfg.Concurrency/c.cfg.MaxMessages+1, maxReceivers)
}

// giveBackWaiting nacks at once the messages that wait behind a running one
// of their FIFO group: received, not started.
func (c *Consumer) giveBackWaiting(ctx context.Context) {
	var msgs []*sqsloop.Message
	for _, r := range c.waiting.all() {
		first, end := r.rest()
		for i := first; i < end; i++ {
			if c.ext.Detach(r.leases[i]) == nil {
				msgs = append(msgs, r.msgs[i])
			}
		}
	}
	for len(msgs) > 0 {
		n := min(len(msgs), sqsloop.MaxBatchSize)
		c.nackUnstarted(ctx, msgs[:n])
		msgs = msgs[n:]
	}
}

// awaitHandlers waits for in-flight handlers. When the drain budget (what is
// left of it) runs out it cancels their contexts and stops the extender, whose calls in
// flight would otherwise hold up their Detach.
func (c *Consumer) awaitHandlers(handlers *pool, budgetLeft time.Duration, stopExt context.CancelFunc) {
	idle := make(chan struct{})
	go func() { handlers.wait(); close(idle) }()
	budget := time.NewTimer(max(budgetLeft, 0))
	defer budget.Stop()
	select {
	case <-idle:
		return
	case <-budget.C:
		c.cfg.Logger.Warn("consumer: drain budget exhausted; cancelling in-flight handlers",
			"shutdown_timeout", c.cfg.ShutdownTimeout)
		c.cancelInFlight()
		stopExt()
	}
	<-idle
}
