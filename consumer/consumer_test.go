package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// deniedDeletes is a mailbox whose deletes are all denied.
type deniedDeletes struct {
	sqsloop.Mailbox
	calls atomic.Int32
}

func (d *deniedDeletes) Delete(ctx context.Context, handles []string) ([]error, error) {
	d.calls.Add(1)
	return nil, fmt.Errorf("DeleteMessageBatch: AccessDenied: %w", sqsloop.ErrAccessDenied)
}

// Acks denied access end Run after MaxAccessDenied delete calls, with the
// error, instead of re-running every message each visibility timeout.
func TestDeniedAcksEndRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(3)...)
		mb := &deniedDeletes{Mailbox: q}
		var runs atomic.Int32
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { runs.Add(1); return nil }, fast())
		err := c.Run(t.Context())
		if !errors.Is(err, sqsloop.ErrAccessDenied) {
			t.Fatalf("Run = %v, want ErrAccessDenied", err)
		}
		if n := runs.Load(); n != 3 {
			t.Fatalf("%d handler runs, want each of the 3 messages once", n)
		}
		if n := mb.calls.Load(); n < 5 {
			t.Fatalf("%d delete calls, want at least 5 (visibility.MaxAccessDenied)", n)
		}
	})
}

// Shutdown's context ending first cancels in-flight handlers and returns its
// error; Run still completes, saying that the drain budget ran out (as
// ErrDrainTimeout's doc has it: ShutdownTimeout, or Shutdown's context).
func TestShutdownContextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "endless")
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, time.Hour, time.Second, func() { heartbeat.Beat(ctx) })
		}, fast())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
		}
		if err := <-runErr; !errors.Is(err, ErrDrainTimeout) || !strings.Contains(err.Error(), "1 handlers cancelled") {
			t.Fatalf("Run = %v, want ErrDrainTimeout with 1 handler cancelled", err)
		}
		if qs := q.Stats(); qs.Visible != 1 {
			t.Fatalf("queue %+v: the interrupted message must be visible", qs)
		}
	})
}

func TestShutdownBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "x")
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := c.Stats(); st.Received != 0 {
			t.Fatalf("Run after Shutdown received %d", st.Received)
		}
	})
}

func TestSecondRunIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		stop := start(t, c)
		synctest.Wait()
		if err := c.Run(context.Background()); !errors.Is(err, sqsloop.ErrAlreadyRunning) {
			t.Fatalf("second Run = %v, want sqsloop.ErrAlreadyRunning", err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}
