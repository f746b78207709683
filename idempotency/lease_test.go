package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/internal/harness/jobstores"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// testLease is the sqsloop.Lease a lease owner puts in a handler's
// context, as a test plays it: its extension, which the handler may set.
type testLease struct {
	mu  sync.Mutex
	ext time.Duration
}

func (l *testLease) Extension() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ext
}

func (l *testLease) SetExtension(d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ext = d
	return nil
}

func byBody(m *sqsloop.Message) (string, error) { return m.Body, nil }

// A handler kept alive past the visibility timeout (1 s) by its lease,
// beating every 1.5 s, holds its key as long as the lease holds: another
// message with its key, delivered every half second of the run, is
// nacked (ErrInProgress), never run beside it; on every store. The lease
// is 3 s long either because the lease owner chose it (an adaptive
// extension) or because the handler set it (SetExtension). A claim that
// lasted the visibility timeout, renewed only after beats, lapsed between
// two beats and let the other message run.
func TestClaimFollowsTheLease(t *testing.T) {
	jobstores.Each(t, func(t *testing.T, store jobstate.Store) {
		for _, tc := range []struct {
			name     string
			chosen   time.Duration // the lease owner's extension
			handlers time.Duration // the handler's own (SetExtension), 0: none
		}{
			{"chosen", 3 * time.Second, 0},
			{"set by the handler", time.Second, 3 * time.Second},
		} {
			i := newIdem(t, store, idempotency.Config{Queue: jobstores.Namespace(t) + "-" + tc.name, Key: byBody})
			var running, runs, overlaps atomic.Int32
			long := func(ctx context.Context, m *sqsloop.Message) error {
				running.Add(1)
				defer running.Add(-1)
				runs.Add(1)
				if tc.handlers > 0 {
					if err := sqsloop.SetExtension(ctx, tc.handlers); err != nil {
						return err
					}
				}
				for range 3 {
					heartbeat.Beat(ctx)
					time.Sleep(1500 * time.Millisecond)
				}
				return nil
			}
			other := func(ctx context.Context, m *sqsloop.Message) error {
				runs.Add(1)
				if running.Load() > 0 {
					overlaps.Add(1)
				}
				return nil
			}
			ctx := sqsloop.NewLeaseContext(heartbeat.NewContext(t.Context(), heartbeat.New()), &testLease{ext: tc.chosen})
			first := make(chan error, 1)
			go func() {
				first <- i.Middleware(long)(ctx, &sqsloop.Message{ID: "m-1", Body: "order-7", ReceivedAt: time.Now(), VisibilityTimeout: time.Second})
			}()
			for n := range 8 { // 0.5 s to 4 s into the 4.5 s run
				time.Sleep(500 * time.Millisecond)
				m := &sqsloop.Message{ID: fmt.Sprint("m-", n+2), Body: "order-7", ReceivedAt: time.Now(), VisibilityTimeout: time.Second}
				if err := call(t.Context(), i, m, other); !errors.Is(err, idempotency.ErrInProgress) {
					t.Errorf("%s: another message of the key %v into the run: %v, want ErrInProgress", tc.name, time.Duration(n+1)*500*time.Millisecond, err)
				}
			}
			if err := <-first; err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if runs.Load() != 1 || overlaps.Load() != 0 {
				t.Errorf("%s: %d runs, %d beside the first; want 1 and 0", tc.name, runs.Load(), overlaps.Load())
			}
		}
	})
}

// Under a consumer: a handler that sets its own extension (8 s, the
// queue's visibility timeout being 2 s) and beats every 3 s keeps its
// message and its key; a second message with the same key, received
// meanwhile, is nacked while the first runs and acked as a duplicate after
// it, never run.
func TestHandlerKeptPastTheVisibilityTimeoutKeepsItsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		mailboxtest.SendBodies(t.Context(), t, q, "order-7", "order-7")
		i := newIdem(t, &jobstate.Memory{}, idempotency.Config{Queue: "jobs", Key: byBody})
		var running, runs, overlaps atomic.Int32
		c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			runs.Add(1)
			if err := sqsloop.SetExtension(ctx, 8*time.Second); err != nil {
				return err
			}
			for range 3 { // 9 s
				heartbeat.Beat(ctx)
				time.Sleep(3 * time.Second)
			}
			return nil
		}, consumer.Config{Concurrency: 2, WaitTime: time.Second, Logger: quiet, Middleware: []sqsloop.Middleware{i.Middleware}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		for {
			time.Sleep(time.Second)
			if a, _ := q.QueueAttributes(t.Context()); a.ApproximateMessages+a.ApproximateMessagesInFlight+a.ApproximateMessagesDelayed == 0 {
				break
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if runs.Load() != 1 || overlaps.Load() != 0 {
			t.Errorf("%d runs, %d overlapping, want 1 and 0", runs.Load(), overlaps.Load())
		}
		if st := i.Stats(); st.Duplicates != 1 || st.Busy == 0 || st.LostClaims != 0 {
			t.Errorf("stats %+v, want 1 duplicate after ≥ 1 busy nack, no claim lost", st)
		}
		if st := c.Stats(); st.LeasesLost != 0 {
			t.Errorf("%d leases lost, want 0", st.LeasesLost)
		}
	})
}
