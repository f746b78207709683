package visibility

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
)

func TestMain(m *testing.M) {
	// Lost leases and failed extensions are expected here: keep the log quiet.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	goleak.VerifyTestMain(m)
}

// recorder is a Changer that records every call and answers per entry.
type recorder struct {
	mu      sync.Mutex
	calls   []call
	entry   func(handle string) error // per-entry error; nil means success
	callErr error
	gate    chan struct{} // when set, each call waits for it to close
}

type call struct {
	at      time.Time
	changes []sqsloop.VisibilityChange
}

func (r *recorder) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	r.mu.Lock()
	r.calls = append(r.calls, call{at: time.Now(), changes: append([]sqsloop.VisibilityChange(nil), changes...)})
	gate, callErr, entry := r.gate, r.callErr, r.entry
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if callErr != nil {
		return nil, callErr
	}
	errs := make([]error, len(changes))
	for i, c := range changes {
		if entry != nil {
			errs[i] = entry(c.ReceiptHandle)
		}
	}
	return errs, nil
}

func (r *recorder) snapshot() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

// entriesFor counts the extension entries sent for handle.
func (r *recorder) entriesFor(handle string) int {
	n := 0
	for _, c := range r.snapshot() {
		for _, ch := range c.changes {
			if ch.ReceiptHandle == handle {
				n++
			}
		}
	}
	return n
}

// start runs e in the background of the synctest bubble and returns a stop
// function that ends Run and waits for it.
func start(t *testing.T, e *Extender) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func message(id string, vt time.Duration) *sqsloop.Message {
	return &sqsloop.Message{ID: id, ReceiptHandle: "rh-" + id, ReceivedAt: time.Now(), VisibilityTimeout: vt, ReceiveCount: 1}
}
