package idempotency_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/internal/rules"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newIdem(t *testing.T, store jobstate.Store, cfg idempotency.Config) *idempotency.Idempotency {
	t.Helper()
	cfg.Logger = quiet
	i, err := idempotency.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// call runs h through i's middleware for m, with a heartbeat in ctx.
func call(ctx context.Context, i *idempotency.Idempotency, m *sqsloop.Message, h func(context.Context, *sqsloop.Message) error) error {
	return i.Middleware(h)(heartbeat.NewContext(ctx, heartbeat.New()), m)
}

// retryDelay is the delay the consumer and sqslambda nack err with.
func retryDelay(err error) time.Duration {
	return rules.RetryDelay(err, 1, func(int) time.Duration { return -1 })
}

// A completed key's later delivery is acked without running the handler;
// OnDuplicate, when set, gets the result the run stored.
func TestDuplicateIsAckedWithoutRunning(t *testing.T) {
	store := &jobstate.Memory{}
	var dup []byte
	i := newIdem(t, store, idempotency.Config{OnDuplicate: func(ctx context.Context, m *sqsloop.Message, result []byte) error {
		dup = result
		return nil
	}})
	runs := 0
	h := func(ctx context.Context, m *sqsloop.Message) error {
		runs++
		return idempotency.SetResult(ctx, []byte("receipt 42"))
	}
	m := &sqsloop.Message{ID: "m-1", ReceiveCount: 1}
	for n := range 3 {
		m.ReceiveCount = n + 1
		if err := call(t.Context(), i, m, h); err != nil {
			t.Fatalf("delivery %d: %v", n+1, err)
		}
	}
	if runs != 1 {
		t.Errorf("the handler ran %d times for 3 deliveries, want 1", runs)
	}
	if string(dup) != "receipt 42" {
		t.Errorf("OnDuplicate got %q, want the stored result", dup)
	}
	if st := i.Stats(); st.Ran != 1 || st.Completed != 1 || st.Duplicates != 2 {
		t.Errorf("stats %+v, want 1 ran, 1 completed, 2 duplicates", st)
	}
}

// A completed key is remembered for Config.Retention from its completion:
// a duplicate within the window is acked unrun, one after it runs again.
func TestCompletedKeyExpiresAfterRetention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		i := newIdem(t, &jobstate.Memory{}, idempotency.Config{Retention: time.Hour})
		runs := 0
		h := func(ctx context.Context, m *sqsloop.Message) error { runs++; return nil }
		m := &sqsloop.Message{ID: "m-1"}
		for _, wait := range []time.Duration{0, 59 * time.Minute, 2 * time.Minute} {
			time.Sleep(wait)
			if err := call(t.Context(), i, m, h); err != nil {
				t.Fatal(err)
			}
		}
		if runs != 2 {
			t.Errorf("the handler ran %d times (at 0, 59 min, 61 min, Retention 1 h), want 2: once, and again after the window", runs)
		}
	})
}

// A failure or a panic releases the claim: the next delivery runs at once.
func TestFailureReleasesTheClaim(t *testing.T) {
	for _, panics := range []bool{false, true} {
		store := &jobstate.Memory{}
		i := newIdem(t, store, idempotency.Config{})
		m := &sqsloop.Message{ID: "m-1", ReceiveCount: 1, VisibilityTimeout: time.Hour}
		func() {
			defer func() { _ = recover() }()
			_ = call(t.Context(), i, m, func(ctx context.Context, m *sqsloop.Message) error {
				if panics {
					panic("boom")
				}
				return errors.New("fails")
			})
		}()
		ran := false
		m.ReceiveCount = 2
		if err := call(t.Context(), i, m, func(ctx context.Context, m *sqsloop.Message) error { ran = true; return nil }); err != nil || !ran {
			t.Errorf("panic %v: the retry after a failure: ran %v, %v; want it run at once", panics, ran, err)
		}
	}
}

// A key held by another run under a live lease (a process that died
// holding it) is nacked until that lease ends, not run; once it lapses the
// next delivery runs.
func TestHeldKeyIsNackedUntilItsLeaseLapses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &jobstate.Memory{}
		i := newIdem(t, store, idempotency.Config{})
		if err := store.Put(t.Context(), jobstate.Record{Key: "idempotency//m-1", State: jobstate.InProgress, Owner: "dead process",
			LeaseUntil: time.Now().Add(10 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		ran := false
		h := func(ctx context.Context, m *sqsloop.Message) error { ran = true; return nil }
		m := &sqsloop.Message{ID: "m-1", ReceiveCount: 2, VisibilityTimeout: 10 * time.Second}
		err := call(t.Context(), i, m, h)
		if !errors.Is(err, idempotency.ErrInProgress) || ran {
			t.Fatalf("a delivery while another holds the key: ran %v, %v; want ErrInProgress", ran, err)
		}
		if d := retryDelay(err); d != 11*time.Second {
			t.Errorf("nacked with a delay of %v, want 11s (the lease's 10 s and a second)", d)
		}
		time.Sleep(retryDelay(err))
		if err := call(t.Context(), i, m, h); err != nil || !ran {
			t.Errorf("after the lease lapsed: ran %v, %v; want it run", ran, err)
		}
		if st := i.Stats(); st.Busy != 1 || st.Ran != 1 {
			t.Errorf("stats %+v, want 1 busy, 1 ran", st)
		}
	})
}

// A beating handler's claim is renewed: another message with the same
// key, delivered long after the first claim's lease (3 s) would have
// lapsed, is nacked while the first still runs, and acked as a duplicate
// once it has completed. Without renewals the second would run beside the
// first.
func TestClaimIsRenewedWhileTheHandlerBeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &jobstate.Memory{}
		byBody := func(m *sqsloop.Message) (string, error) { return m.Body, nil }
		i := newIdem(t, store, idempotency.Config{Key: byBody})
		var running, overlaps, runs atomic.Int32
		h := func(ctx context.Context, m *sqsloop.Message) error {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			runs.Add(1)
			for range 20 { // 10 s, beating every 500 ms
				heartbeat.Beat(ctx)
				time.Sleep(500 * time.Millisecond)
			}
			return nil
		}
		first := make(chan error, 1)
		go func() {
			first <- call(t.Context(), i, &sqsloop.Message{ID: "m-1", Body: "order-7", VisibilityTimeout: 3 * time.Second}, h)
		}()
		time.Sleep(7 * time.Second)
		err := call(t.Context(), i, &sqsloop.Message{ID: "m-2", Body: "order-7"}, h)
		if !errors.Is(err, idempotency.ErrInProgress) {
			t.Errorf("another message of the key, 7 s into the first's run: %v, want ErrInProgress", err)
		}
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if err := call(t.Context(), i, &sqsloop.Message{ID: "m-2", Body: "order-7"}, h); err != nil {
			t.Errorf("after the first completed: %v, want a duplicate, acked", err)
		}
		if runs.Load() != 1 || overlaps.Load() != 0 {
			t.Errorf("%d runs, %d overlapping, want 1 and 0", runs.Load(), overlaps.Load())
		}
	})
}

// A handler that finds at its renewal that another run took its key (its
// claim lapsed) has its context cancelled with ErrClaimLost.
func TestLostClaimCancelsTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &jobstate.Memory{}
		i := newIdem(t, store, idempotency.Config{})
		err := call(t.Context(), i, &sqsloop.Message{ID: "m-1", VisibilityTimeout: 3 * time.Second}, func(ctx context.Context, m *sqsloop.Message) error {
			if err := store.Put(ctx, jobstate.Record{Key: "idempotency//m-1", State: jobstate.InProgress, Owner: "thief", LeaseUntil: time.Now().Add(time.Hour)}); err != nil {
				return err
			}
			for n := 0; ctx.Err() == nil && n < 20; n++ { // 10 s: three leases
				heartbeat.Beat(ctx)
				select {
				case <-ctx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
			return context.Cause(ctx)
		})
		if !errors.Is(err, idempotency.ErrClaimLost) {
			t.Errorf("the handler returned %v, want its context's cause ErrClaimLost", err)
		}
		if r, _ := store.Get(t.Context(), "idempotency//m-1"); r.Owner != "thief" {
			t.Errorf("the loser's release deleted the thief's claim: %+v", r)
		}
		if st := i.Stats(); st.LostClaims != 1 {
			t.Errorf("stats %+v, want 1 lost claim", st)
		}
	})
}

// ackLosing is a Mailbox whose first Delete reports success and deletes
// nothing: the ack of a finished job lost (a crash between the handler's
// return and the delete has the same effect).
type ackLosing struct {
	sqsloop.Mailbox
	lost atomic.Bool
}

func (a *ackLosing) Delete(ctx context.Context, handles []string) ([]error, error) {
	if a.lost.CompareAndSwap(false, true) {
		return make([]error, len(handles)), nil
	}
	return a.Mailbox.Delete(ctx, handles)
}

// Under a consumer: a job whose ack was lost comes back after its lease
// and is acked without running again (today a second full run).
func TestLostAckDoesNotRunTheJobAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		mailboxtest.SendBodies(t.Context(), t, q, "job")
		i := newIdem(t, &jobstate.Memory{}, idempotency.Config{Queue: "jobs"})
		var runs atomic.Int32
		c, err := consumer.New(&ackLosing{Mailbox: q}, func(ctx context.Context, m *sqsloop.Message) error {
			runs.Add(1)
			return nil
		}, consumer.Config{VisibilityTimeout: 2 * time.Second, WaitTime: time.Second, Logger: quiet,
			Visibility: visibility.Config{Interval: 500 * time.Millisecond, Extension: 2 * time.Second},
			Middleware: []sqsloop.Middleware{i.Middleware}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		for i.Stats().Duplicates == 0 {
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(5 * time.Second) // a third delivery, if the duplicate's ack were lost too
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("the handler ran %d times, want 1", n)
		}
		if a, _ := q.QueueAttributes(t.Context()); a.ApproximateMessages+a.ApproximateMessagesInFlight != 0 {
			t.Errorf("the queue still holds %+v, want the duplicate acked", a)
		}
	})
}

// Two consumers of one queue whose messages share keys (three messages
// per order): no two runs of one key overlap, and each key runs once.
func TestTwoConsumersNeverRunOneKeyAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for range 3 {
			for o := range 10 {
				bodies = append(bodies, "order-"+string(rune('a'+o)))
			}
		}
		mailboxtest.SendBodies(t.Context(), t, q, bodies...)
		store := &jobstate.Memory{}
		var mu sync.Mutex
		running, runs := map[string]bool{}, map[string]int{}
		overlaps := 0
		h := func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			if running[m.Body] {
				overlaps++
			}
			running[m.Body] = true
			runs[m.Body]++
			mu.Unlock()
			for range 6 {
				heartbeat.Beat(ctx)
				time.Sleep(500 * time.Millisecond)
			}
			mu.Lock()
			running[m.Body] = false
			mu.Unlock()
			return nil
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range 2 {
			i := newIdem(t, store, idempotency.Config{Key: func(m *sqsloop.Message) (string, error) { return m.Body, nil }})
			c, err := consumer.New(q, h, consumer.Config{Concurrency: 8, VisibilityTimeout: 2 * time.Second, WaitTime: time.Second, Logger: quiet,
				Visibility: visibility.Config{Interval: 500 * time.Millisecond, Extension: 2 * time.Second},
				Middleware: []sqsloop.Middleware{i.Middleware}})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				if err := c.Run(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		for {
			time.Sleep(time.Second)
			if a, _ := q.QueueAttributes(t.Context()); a.ApproximateMessages+a.ApproximateMessagesInFlight+a.ApproximateMessagesDelayed == 0 {
				break
			}
		}
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if overlaps != 0 {
			t.Errorf("%d runs overlapped another run of their key", overlaps)
		}
		for o, n := range runs {
			if n != 1 {
				t.Errorf("%s ran %d times, want 1", o, n)
			}
		}
		if len(runs) != 10 {
			t.Errorf("%d keys ran, want 10", len(runs))
		}
	})
}

// New checks its arguments, naming each bad one; a key that is too long or
// that Key cannot derive fails the delivery without running it.
func TestChecks(t *testing.T) {
	_, err := idempotency.New(nil, idempotency.Config{Queue: string(make([]byte, 300)), Retention: time.Second})
	if !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Fatalf("New: %v, want ErrInvalidArgument", err)
	}
	i := newIdem(t, &jobstate.Memory{}, idempotency.Config{Key: func(m *sqsloop.Message) (string, error) {
		if m.Body == "" {
			return "", errors.New("no order ID")
		}
		return m.Body, nil
	}})
	ran := false
	h := func(ctx context.Context, m *sqsloop.Message) error { ran = true; return nil }
	if err := call(t.Context(), i, &sqsloop.Message{ID: "m"}, h); err == nil || ran {
		t.Errorf("a message without a key: ran %v, %v; want an error", ran, err)
	}
	if err := call(t.Context(), i, &sqsloop.Message{ID: "m", Body: string(make([]byte, 2000))}, h); !errors.Is(err, sqsloop.ErrInvalidArgument) || ran {
		t.Errorf("a key of 2,000 bytes: ran %v, %v; want ErrInvalidArgument", ran, err)
	}
	if err := idempotency.SetResult(t.Context(), nil); !errors.Is(err, idempotency.ErrNoClaim) {
		t.Errorf("SetResult outside the middleware: %v, want ErrNoClaim", err)
	}
}
