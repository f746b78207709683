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
	"github.com/sqsloop/sqsloop/memmailbox"
)

// A handler that ignores its cancelled context cannot hold Run past the
// drain budget: after ShutdownTimeout and DrainGrace its message is given
// back, Run returns an error wrapping ErrDrainTimeout that counts it as
// abandoned, and what the handler returns later acks nothing.
func TestRunEndsOnTimeWhenAHandlerIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "stubborn")
		cfg := fast()
		cfg.ShutdownTimeout = 3 * time.Second
		returned := make(chan struct{})
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			defer close(returned)
			for range 60 { // works on for a minute, beating, ignoring ctx
				heartbeat.Beat(ctx)
				time.Sleep(time.Second)
			}
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(time.Second)
		began := time.Now()
		err := stop()
		took := time.Since(began)
		if !errors.Is(err, ErrDrainTimeout) || !strings.Contains(err.Error(), "1 of them abandoned") {
			t.Fatalf("Run = %v, want ErrDrainTimeout with 1 abandoned", err)
		}
		if want := 3*time.Second + DrainGrace; took != want {
			t.Fatalf("Run returned %v after cancel, want %v (budget + grace)", took, want)
		}
		if qs := q.Stats(); qs.Visible != 1 || qs.InFlight != 0 {
			t.Fatalf("queue %+v: want the abandoned message visible again when Run returns", qs)
		}
		if st := c.Stats(); st.Abandoned != 1 || st.GivenBack != 1 {
			t.Fatalf("stats %+v: want 1 abandoned, 1 given back", st)
		}
		<-returned // the handler returns nil 60 s in
		synctest.Wait()
		if qs := q.Stats(); qs.Deleted != 0 || qs.Visible != 1 {
			t.Fatalf("queue %+v: the late nil of an abandoned handler must not ack", qs)
		}
		if st := c.Stats(); st.Acked != 0 || st.Extensions > 4 {
			t.Fatalf("stats %+v: want no ack, and no extension after the give-back", st)
		}
	})
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
// returns at once, not after the check's own timeout.
func TestShutdownInterruptsTheQueueCheck(t *testing.T) {
	for _, how := range []string{"Shutdown", "cancel"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mb := &hangingAttributes{Mailbox: newQueue(t, memmailbox.QueueConfig{})}
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
				if took := time.Since(began); took != 0 {
					t.Fatalf("Run returned %v after %s, want at once", took, how)
				}
			})
		})
	}
}

// deniedDeletes is a mailbox whose deletes are all denied.
type deniedDeletes struct {
	sqsloop.Mailbox
	calls atomic.Int32
}

func (d *deniedDeletes) Delete(ctx context.Context, handles []string) ([]error, error) {
	d.calls.Add(1)
	return nil, fmt.Errorf("DeleteMessageBatch: AccessDenied: %w", sqsloop.ErrAccessDenied)
}

// Receives denied access end Run after MaxAccessDenied tries, with the
// error, instead of retrying forever.
func TestDeniedReceivesEndRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mb := &failingMailbox{Mailbox: newQueue(t, memmailbox.QueueConfig{}), err: errors.Join(errors.New("AccessDenied"), sqsloop.ErrAccessDenied)}
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		if err := c.Run(t.Context()); !errors.Is(err, sqsloop.ErrAccessDenied) {
			t.Fatalf("Run = %v, want ErrAccessDenied", err)
		}
		if n := mb.calls.Load(); n != 5 {
			t.Fatalf("%d receives, want 5 (visibility.MaxAccessDenied)", n)
		}
		if c.Running() {
			t.Fatal("Running() = true after Run returned")
		}
	})
}

// Acks denied access end Run after MaxAccessDenied delete calls, with the
// error, instead of re-running every message each visibility timeout.
func TestDeniedAcksEndRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
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
