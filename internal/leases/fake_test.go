package leases

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestMain(m *testing.M) {
	// Lost leases and failed calls are expected here: keep the log quiet.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	goleak.VerifyTestMain(m)
}

// op is the kind of a recorded call.
type op uint8

const (
	opChange op = iota // ChangeVisibility: an extension, a nack or a give-back
	opDelete           // Delete: acks
)

func (o op) String() string { return [...]string{"change", "delete"}[o] }

// sent is one recorded call: when it was made and returned, and its
// entries. For a Delete, timeouts is nil.
type sent struct {
	op       op
	at, back time.Time
	handles  []string
	timeouts []time.Duration
}

// recorder is a Mailbox that records every call with its time and answers
// per entry.
type recorder struct {
	mu                sync.Mutex
	calls             []*sent
	onWire, maxOnWire int // calls not yet returned, now and at most

	// entry answers one entry (nil: success); callErr fails a whole call
	// (nil: it does not). Both are called outside the lock, from the
	// Manager's sender goroutines.
	entry   func(o op, handle string) error
	callErr func(o op) error
	// reply, when set, answers instead of entry and callErr: n counts the
	// calls of s.op before this one.
	reply func(s *sent, n int) ([]error, error)
	// gate, when set, makes each call (or each call gated reports true
	// for) wait for it to close, whatever its context: a call whose answer
	// comes late.
	gate  chan struct{}
	gated func(s *sent) bool
	// hang, when set and true for a call, makes it wait for its context to
	// end and fail with the context's error.
	hang func(o op) bool
	// latency, when set, is how long each call takes to answer (cut short
	// by its context, with the context's error).
	latency func(s *sent) time.Duration
}

// failing returns a recorder whose calls of kind o all fail with err, and
// whose other calls succeed.
func failing(o op, err error) *recorder {
	return &recorder{callErr: func(got op) error {
		if got == o {
			return err
		}
		return nil
	}}
}

func (r *recorder) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	s := &sent{op: opChange}
	for _, c := range changes {
		s.handles = append(s.handles, c.ReceiptHandle)
		s.timeouts = append(s.timeouts, c.Timeout)
	}
	return r.answer(ctx, s)
}

func (r *recorder) Delete(ctx context.Context, handles []string) ([]error, error) {
	return r.answer(ctx, &sent{op: opDelete, handles: append([]string(nil), handles...)})
}

func (r *recorder) answer(ctx context.Context, s *sent) ([]error, error) {
	s.at = time.Now()
	r.mu.Lock()
	n := 0
	for _, c := range r.calls {
		if c.op == s.op {
			n++
		}
	}
	r.calls = append(r.calls, s)
	r.onWire++
	r.maxOnWire = max(r.maxOnWire, r.onWire)
	gate, gated, hang, latency, reply, callErr, entry := r.gate, r.gated, r.hang, r.latency, r.reply, r.callErr, r.entry
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		s.back = time.Now()
		r.onWire--
		r.mu.Unlock()
	}()
	if gate != nil && (gated == nil || gated(s)) {
		<-gate
	}
	if hang != nil && hang(s.op) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if latency != nil {
		select {
		case <-time.After(latency(s)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if reply != nil {
		return reply(s, n)
	}
	if callErr != nil {
		if err := callErr(s.op); err != nil {
			return nil, err
		}
	}
	errs := make([]error, len(s.handles))
	if entry != nil {
		for i, h := range s.handles {
			errs[i] = entry(s.op, h)
		}
	}
	return errs, nil
}

// snapshot returns copies of the calls recorded so far, of kind o.
func (r *recorder) snapshot(o op) []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sent
	for _, s := range r.calls {
		if s.op == o {
			out = append(out, *s)
		}
	}
	return out
}

// entry is one recorded entry about one receipt handle.
type entry struct {
	at, back time.Time
	timeout  time.Duration // ChangeVisibility only
}

// entriesFor returns the entries of kind o sent for handle, in order.
func (r *recorder) entriesFor(o op, handle string) []entry {
	var out []entry
	for _, s := range r.snapshot(o) {
		for i, h := range s.handles {
			if h == handle {
				e := entry{at: s.at, back: s.back}
				if o == opChange {
					e.timeout = s.timeouts[i]
				}
				out = append(out, e)
			}
		}
	}
	return out
}

// start runs m in the background of the synctest bubble and returns a stop
// function that ends Run and waits for it.
func start(t *testing.T, m *Manager) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// running returns a Manager over mb running in the background of the
// synctest bubble until the test ends (Run is stopped and waited for in a
// cleanup, after the test's deferred calls).
func running(t *testing.T, mb Mailbox, cfg visibility.Config) *Manager {
	t.Helper()
	m := newManager(t, mb, cfg)
	t.Cleanup(start(t, m))
	return m
}

// newManager returns a Manager over mb, failing the test on a config error.
func newManager(t testing.TB, mb Mailbox, cfg visibility.Config) *Manager {
	t.Helper()
	m, err := New(mb, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func message(id string, vt time.Duration) *sqsloop.Message {
	return &sqsloop.Message{ID: id, ReceiptHandle: "rh-" + id, ReceivedAt: time.Now(), VisibilityTimeout: vt, ReceiveCount: 1}
}

// fastConfig: 3 s visibility leases, extended by 3 s at most every second.
var fastConfig = visibility.Config{Interval: time.Second, Extension: 3 * time.Second}

// beatEvery beats hb every period until ctx is done.
func beatEvery(ctx context.Context, hb *heartbeat.Heartbeat, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		hb.Beat()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lostLease is one call of Config.OnLeaseLost.
type lostLease struct {
	MessageID    string
	ReceiveCount int
	Err          error
}

// lostLog collects the leases reported to Config.OnLeaseLost.
type lostLog struct {
	mu   sync.Mutex
	lost []lostLease
}

func (g *lostLog) hook(m *sqsloop.Message, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lost = append(g.lost, lostLease{m.ID, m.ReceiveCount, err})
}

func (g *lostLog) get() []lostLease {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]lostLease(nil), g.lost...)
}
