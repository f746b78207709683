package consumer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// noAttributes hides the AttributesReader of the mailbox it wraps.
type noAttributes struct{ sqsloop.Mailbox }

// A zero VisibilityTimeout is the queue's, read at start-up: the receives
// ask for it, and the lease owner's Interval follows it. A mailbox that
// cannot say gets 5 min.
func TestVisibilityTimeoutIsTheQueues(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(sqsloop.Mailbox) sqsloop.Mailbox
		want time.Duration
	}{
		{"the queue's", func(mb sqsloop.Mailbox) sqsloop.Mailbox { return mb }, 45 * time.Second},
		{"no AttributesReader", func(mb sqsloop.Mailbox) sqsloop.Mailbox { return noAttributes{mb} }, 5 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 45 * time.Second})
				send(t, q, "a")
				got := make(chan time.Duration, 1)
				c := mustNew(t, tc.wrap(q), func(_ context.Context, m *sqsloop.Message) error {
					got <- m.VisibilityTimeout
					return nil
				}, Config{WaitTime: time.Second, Logger: quiet})
				stop := start(t, c)
				if vt := <-got; vt != tc.want {
					t.Errorf("received with a visibility timeout of %v, want %v", vt, tc.want)
				}
				if err := stop(); err != nil {
					t.Fatal(err)
				}
				if c.cfg.Visibility.Interval != tc.want/5 {
					t.Errorf("Interval %v, want a fifth of %v", c.cfg.Visibility.Interval, tc.want)
				}
			})
		})
	}
}

// A Visibility that does not fit the queue's visibility timeout is
// reported by Run, before it receives anything, naming the field.
func TestVisibilityThatDoesNotFitTheQueueFailsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second})
		send(t, q, "a")
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error {
			t.Error("a handler ran")
			return nil
		}, Config{Visibility: visibility.Config{Interval: 20 * time.Second}, Logger: quiet})
		err := c.Run(t.Context())
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "Visibility.Interval") || !strings.Contains(err.Error(), "30s") {
			t.Fatalf("Run = %v, want ErrInvalidArgument naming Visibility.Interval and the queue's 30s", err)
		}
	})
}

// A handler that beats every 90 s keeps its message on a 30 s queue by
// setting its own extension; SetExtension outside the bounds is refused.
func TestSetExtensionKeepsASlowBeatersMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second})
		send(t, q, "slow")
		runs := make(chan error, 2)
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			if err := sqsloop.SetExtension(ctx, 2*time.Hour); !errors.Is(err, sqsloop.ErrInvalidArgument) {
				runs <- err
				return nil
			}
			if err := sqsloop.SetExtension(ctx, 2*time.Minute); err != nil {
				runs <- err
				return nil
			}
			for range 4 { // 6 min
				heartbeat.Beat(ctx)
				time.Sleep(90 * time.Second)
			}
			runs <- nil
			return nil
		}, Config{WaitTime: time.Second, Logger: quiet})
		stop := start(t, c)
		if err := <-runs; err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if st := c.Stats(); st.Started != 1 || st.LeasesLost != 0 || st.Acked != 1 {
			t.Fatalf("stats %+v: want one run, its lease kept and acked", st)
		}
		if st := q.Stats(); st.Visible+st.InFlight != 0 || st.Received != 1 {
			t.Fatalf("queue %+v: want the message received once and gone", st)
		}
	})
}
