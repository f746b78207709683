package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// blockingLoop runs until its context is cancelled and returns ctx.Err().
type blockingLoop struct {
	started chan struct{}
}

func newBlockingLoop() *blockingLoop { return &blockingLoop{started: make(chan struct{})} }

func (b *blockingLoop) Run(ctx context.Context) error {
	close(b.started)
	<-ctx.Done()
	return ctx.Err()
}

// drainLoop is a Shutdowner in the net/http.Server style: Shutdown stops
// intake, and Run finishes its in-flight work in drain, then returns nil.
type drainLoop struct {
	drain       time.Duration // in-flight work left when Shutdown is called
	shutdownErr error         // returned by Shutdown after the drain
	onShutdown  func()        // called as Shutdown begins, if set

	once        sync.Once
	stopping    chan struct{} // closed by Shutdown
	returned    chan struct{} // closed when Run returns
	ctxErrAtEnd atomic.Value  // Run's ctx.Err() when Run returned (error or nil)
	running     atomic.Bool
	hadDeadline atomic.Bool // Shutdown's ctx had a deadline
}

func newDrainLoop(drain time.Duration) *drainLoop {
	return &drainLoop{drain: drain, stopping: make(chan struct{}), returned: make(chan struct{})}
}

func (d *drainLoop) Run(ctx context.Context) (err error) {
	d.running.Store(true)
	defer func() {
		d.running.Store(false)
		d.ctxErrAtEnd.Store(errBox{ctx.Err()})
		close(d.returned)
	}()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-d.stopping:
	}
	select {
	case <-time.After(d.drain): // the in-flight work finishing
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *drainLoop) Shutdown(ctx context.Context) error {
	if d.onShutdown != nil {
		d.onShutdown()
	}
	_, ok := ctx.Deadline()
	d.hadDeadline.Store(ok)
	d.once.Do(func() { close(d.stopping) })
	select {
	case <-d.returned:
		return d.shutdownErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *drainLoop) Ready() error {
	if !d.running.Load() {
		return errors.New("not running")
	}
	return nil
}

// ctxErr returns Run's ctx.Err() at the moment Run returned.
func (d *drainLoop) ctxErr() error {
	b, _ := d.ctxErrAtEnd.Load().(errBox)
	return b.err
}

type errBox struct{ err error }

// serverLoop behaves like net/http.Server: Run returns as soon as Shutdown
// is called, and Shutdown returns once its connections are done, linger
// later.
type serverLoop struct {
	linger time.Duration
	closed chan struct{}
}

func (s *serverLoop) Run(ctx context.Context) error {
	select {
	case <-s.closed:
		return nil // http.ErrServerClosed, in a real adapter
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *serverLoop) Shutdown(ctx context.Context) error {
	close(s.closed)
	select {
	case <-time.After(s.linger):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fakeSignals stands in for os/signal and os.Exit: it keeps the channel
// Run registers, so a test delivers signals to it (os/signal cannot be used
// inside a synctest bubble), and records exit codes.
type fakeSignals struct {
	mu        sync.Mutex
	ch        chan<- os.Signal
	installed bool
	notified  []os.Signal
	stopped   int // stopNotify calls with the registered channel
	codes     []int
}

// withFakeSignals makes g use a new fakeSignals instead of os/signal and
// os.Exit, and returns it.
func withFakeSignals(g *LoopGroup) *fakeSignals {
	f := &fakeSignals{}
	g.notify = func(ch chan<- os.Signal, sig ...os.Signal) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ch, f.installed = ch, true
		f.notified = append(f.notified, sig...)
	}
	g.stopNotify = func(ch chan<- os.Signal) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if ch == f.ch {
			f.stopped++
			f.installed = false
		}
	}
	g.Exit = func(code int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.codes = append(f.codes, code)
	}
	return f
}

// send delivers sig as os/signal would: without blocking, to the installed
// channel. It fails the test if no handler is installed.
func (f *fakeSignals) send(t *testing.T, sig os.Signal) {
	t.Helper()
	f.mu.Lock()
	ch, ok := f.ch, f.installed
	f.mu.Unlock()
	if !ok {
		t.Fatalf("signal %v sent while no handler is installed", sig)
	}
	select {
	case ch <- sig:
	default:
		t.Fatalf("signal %v dropped: the channel is full", sig)
	}
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

// newGroup returns a group of the given loops that uses fake signals (see
// withFakeSignals to send some).
func newGroup(t *testing.T, loops map[string]Runnable) (*LoopGroup, *fakeSignals) {
	t.Helper()
	g := &LoopGroup{Logger: slog.New(slog.DiscardHandler)}
	f := withFakeSignals(g)
	for name, r := range loops {
		if err := g.Add(name, r); err != nil {
			t.Fatalf("Add(%q): %v", name, err)
		}
	}
	return g, f
}

// runAsync runs g in a goroutine and returns the channel its result lands on.
func runAsync(ctx context.Context, g *LoopGroup) <-chan error {
	res := make(chan error, 1)
	go func() { res <- g.Run(ctx) }()
	return res
}

// loopErrors returns the error of each failing loop in Run's err, by
// name: each reads "lifecycle: loop NAME: …" and wraps the loop's own.
func loopErrors(err error) map[string]error {
	out := map[string]error{}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return out
	}
	for _, e := range j.Unwrap() {
		rest, ok := strings.CutPrefix(e.Error(), "lifecycle: loop ")
		if !ok {
			continue
		}
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			name, _ := strconv.Unquote(q)
			out[name] = errors.Unwrap(e)
		}
	}
	return out
}
