package consumer

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestQueueWarnings(t *testing.T) {
	cfg := Config{VisibilityTimeout: 5 * time.Minute, ShutdownTimeout: 10 * time.Minute, Visibility: visibility.Config{Disabled: true}}.withDefaults()
	ws := queueWarnings(cfg, sqsloop.QueueAttributes{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 2})
	joined := strings.Join(ws, "\n")
	for _, want := range []string{"ShutdownTimeout", "maxReceiveCount"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q lack %s", joined, want)
		}
	}
	cfg = Config{VisibilityTimeout: 5 * time.Minute}.withDefaults()
	ws = queueWarnings(cfg, sqsloop.QueueAttributes{VisibilityTimeout: 60 * time.Second})
	if len(ws) != 1 || !strings.Contains(ws[0], "Visibility.Interval") {
		t.Errorf("warnings %q, want one about Visibility.Interval", ws)
	}
	if ws := queueWarnings(cfg, sqsloop.QueueAttributes{VisibilityTimeout: 10 * time.Minute, MaxReceiveCount: 10}); len(ws) != 0 {
		t.Errorf("warnings for a fitting queue: %q", ws)
	}
}

// hangingAttributes is a mailbox whose QueueAttributes call hangs until its
// context ends.
type hangingAttributes struct {
	sqsloop.Mailbox
	calls atomic.Int32
}

func (h *hangingAttributes) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	h.calls.Add(1)
	<-ctx.Done()
	return sqsloop.QueueAttributes{}, ctx.Err()
}

// Shutdown and a cancelled context cut the start-up queue check short: Run
// returns within the receive grace, not after the check's own timeout.
func TestShutdownInterruptsTheQueueCheck(t *testing.T) {
	for _, how := range []string{"Shutdown", "cancel"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mb := &hangingAttributes{Mailbox: newQueue(t, sqsloop.QueueSpec{})}
				c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return nil }, fast())
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				runErr := make(chan error, 1)
				go func() { runErr <- c.Run(ctx) }()
				synctest.Wait()
				if mb.calls.Load() != 1 {
					t.Fatal("the queue check did not start")
				}
				began := time.Now()
				if how == "Shutdown" {
					if err := c.Shutdown(context.Background()); err != nil {
						t.Fatal(err)
					}
				} else {
					cancel()
				}
				if err := <-runErr; err != nil {
					t.Fatal(err)
				}
				if took := time.Since(began); took > maxReceiveGrace {
					t.Fatalf("Run returned %v after %s, want within the receive grace %v (the check runs beside the receives)", took, how, maxReceiveGrace)
				}
			})
		})
	}
}

// The start-up queue check runs beside the receives: a slow or hanging
// GetQueueAttributes does not hold back the first message.
func TestQueueCheckDoesNotDelayReceiving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "first")
		mb := &hangingAttributes{Mailbox: q}
		handled := make(chan time.Time, 1)
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { handled <- time.Now(); return nil }, fast())
		began := time.Now()
		stop := start(t, c)
		if at := <-handled; at.Sub(began) != 0 {
			t.Fatalf("first message handled %v after Run began, want at once", at.Sub(began))
		}
		synctest.Wait()
		if mb.calls.Load() != 1 {
			t.Fatal("the queue check did not run")
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}
