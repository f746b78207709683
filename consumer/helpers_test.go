package consumer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fast is a consumer config with 3 s leases extended every second by 3 s.
func fast() Config {
	return Config{
		Concurrency:       10,
		VisibilityTimeout: 3 * time.Second,
		WaitTime:          time.Second,
		Visibility:        visibility.Config{Interval: time.Second, Extension: 3 * time.Second},
		ShutdownTimeout:   30 * time.Second,
		Logger:            quiet,
	}
}

// newQueue sets up spec, named "jobs" (or "jobs.fifo") unless it has a
// name, on a broker of its own, closed at the end of the test.
func newQueue(t *testing.T, spec sqsloop.QueueSpec) *memmailbox.Queue {
	t.Helper()
	b := new(memmailbox.Broker)
	t.Cleanup(func() { b.Close() })
	if spec.Name == "" {
		spec.Name = "jobs"
		if spec.FIFO {
			spec.Name += sqsloop.FIFOSuffix
		}
	}
	q, err := b.CreateQueue(spec)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func send(t *testing.T, q sqsloop.Mailbox, bodies ...string) {
	t.Helper()
	for len(bodies) > 0 {
		n := min(len(bodies), sqsloop.MaxBatchSize)
		out := make([]sqsloop.OutgoingMessage, n)
		for i, b := range bodies[:n] {
			out[i] = sqsloop.OutgoingMessage{Body: b}
		}
		res, err := q.Send(t.Context(), out)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		bodies = bodies[n:]
	}
}

func bodies(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("job-", i)
	}
	return out
}

// start runs c and returns a function that cancels Run's context and
// returns Run's error.
func start(t *testing.T, c *Consumer) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

func mustNew(t *testing.T, mb sqsloop.Mailbox, h sqsloop.Handler, cfg Config) *Consumer {
	t.Helper()
	c, err := New(mb, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// seen records which message bodies handlers saw, and how often.
type seen struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *seen) add(body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[body]++
}

func (s *seen) count(body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[body]
}

// beatUntil beats every period until d has passed or ctx is done.
func beatFor(ctx context.Context, d, period time.Duration, beat func()) error {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		beat()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(period):
		}
	}
	return nil
}

// running reports whether c is receiving: Run started and shutdown not
// begun.
func running(c *Consumer) bool { return c.state.Load() == stateRunning }
