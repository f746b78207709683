package checkpoint_test

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
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// counting is a jobstate.Store that counts its calls.
type counting struct {
	jobstate.Memory
	gets, puts, deletes atomic.Int64
}

func (c *counting) Get(ctx context.Context, key string) (jobstate.Record, error) {
	c.gets.Add(1)
	return c.Memory.Get(ctx, key)
}

func (c *counting) Put(ctx context.Context, r jobstate.Record) error {
	c.puts.Add(1)
	return c.Memory.Put(ctx, r)
}

func (c *counting) Delete(ctx context.Context, key, owner string) error {
	c.deletes.Add(1)
	return c.Memory.Delete(ctx, key, owner)
}

func (c *counting) calls() int64 { return c.gets.Load() + c.puts.Load() + c.deletes.Load() }

func newCheckpoints(t *testing.T, store jobstate.Store) *checkpoint.Checkpoints {
	t.Helper()
	c, err := checkpoint.New(store, checkpoint.Config{Queue: "jobs", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// progress is the 20-step job's checkpoint.
type progress struct {
	Step int `json:"step"`
	Sum  int `json:"sum"`
}

// A 20-step job that checkpoints each step loses its lease in the middle
// of step 8 of its first delivery (it stops beating, after the step's work
// and before its save, the worst place); its redelivery loads the
// checkpoint and does steps 8 to 20: 21 step runs in all, the sum right,
// and the checkpoint marked done once the message is acked. Without the
// checkpoint the redelivery would redo steps 1 to 7 too (28 runs).
func TestRedeliveryResumesFromTheCheckpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		mailboxtest.SendBodies(t.Context(), t, q, "job")
		store := &counting{}
		cp := newCheckpoints(t, store)
		var mu sync.Mutex // two deliveries overlap: the first returns after its lease lapsed
		var runs [20]int
		var id string
		acked := make(chan struct{})
		handler := func(ctx context.Context, m *sqsloop.Message) error {
			var p progress
			if _, err := checkpoint.LoadJSON(ctx, &p); err != nil {
				return err
			}
			mu.Lock()
			id = m.ID
			mu.Unlock()
			for p.Step < 20 {
				mu.Lock()
				runs[p.Step]++
				mu.Unlock()
				p.Sum += p.Step + 1
				if m.ReceiveCount == 1 && p.Step == 7 {
					<-ctx.Done() // hangs without beating: the lease lapses
					return context.Cause(ctx)
				}
				time.Sleep(100 * time.Millisecond)
				p.Step++
				if err := checkpoint.SaveJSON(ctx, p); err != nil {
					return err
				}
			}
			if p.Sum != 210 {
				t.Errorf("the sum of steps 1-20 came out %d, want 210", p.Sum)
			}
			close(acked)
			return nil
		}
		c, err := consumer.New(q, handler, consumer.Config{
			VisibilityTimeout: 2 * time.Second,
			WaitTime:          time.Second,
			Visibility:        visibility.Config{Interval: 500 * time.Millisecond, Extension: 2 * time.Second, CancelOnLeaseLost: true},
			Backoff:           func(int) time.Duration { return 0 },
			Middleware:        []sqsloop.Middleware{cp.Middleware},
			Logger:            quiet,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		<-acked
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for i, n := range runs {
			total += n
			if n < 1 {
				t.Errorf("step %d never ran", i+1)
			}
		}
		if total != 21 {
			t.Errorf("%d step runs for 20 steps and one lost lease, want 21 (steps: %v)", total, runs)
		}
		if st := cp.Stats(); st.Resumed != 1 || st.Done != 1 || st.Saved != 20 {
			t.Errorf("stats %+v, want 20 saved (7 + 13), 1 resumed, 1 done", st)
		}
		if r, err := store.Memory.Get(t.Context(), "checkpoint/jobs/"+id); err != nil || r.State != jobstate.Completed {
			t.Errorf("the acked message's checkpoint: %+v, %v; want it marked done", r, err)
		}
	})
}

// classed is an error naming its class for instrumentation (error.type),
// as a handler's own errors may.
type classed string

func (c classed) Error() string     { return "an error of class " + string(c) }
func (c classed) ErrorType() string { return string(c) }

// call runs h through cp's middleware for m, with a heartbeat in ctx.
func call(t *testing.T, cp *checkpoint.Checkpoints, m *sqsloop.Message, h func(context.Context, *sqsloop.Message) error) error {
	t.Helper()
	return cp.Middleware(h)(heartbeat.NewContext(t.Context(), heartbeat.New()), m)
}

// The checkpoint stays after a failure (and a panic), for the next
// delivery to load; it is replaced by a mark once the handler returns nil
// (done) or a permanent failure (failed for good: the message goes to the
// dead-letter queue), and a later delivery is answered from the mark
// without running the handler.
func TestKeptOnFailureMarkedWhenFinished(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result error
		state  jobstate.State // of the record after the second delivery
	}{
		{"nil", nil, jobstate.Completed},
		{"permanent", sqsloop.Permanent(errors.New("poison")), jobstate.Failed},
		{"failure", errors.New("try again"), jobstate.Saved},
		{"nack after", sqsloop.NackAfter(errors.New("later"), time.Minute), jobstate.Saved},
		// An error that names its own class "permanent" for error.type is
		// not sqsloop.Permanent: the runtimes nack it, so it is kept.
		{"classed permanent", classed("permanent"), jobstate.Saved},
		{"panic", nil, jobstate.Saved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &jobstate.Memory{}
			cp := newCheckpoints(t, store)
			key := "checkpoint/jobs/m-1"
			// First delivery: save, then fail.
			_ = call(t, cp, &sqsloop.Message{ID: "m-1", ReceiveCount: 1}, func(ctx context.Context, m *sqsloop.Message) error {
				if err := checkpoint.Save(ctx, []byte("step 3")); err != nil {
					t.Fatal(err)
				}
				return errors.New("crash")
			})
			if _, err := store.Get(t.Context(), key); err != nil {
				t.Fatalf("after a failure: %v, want the checkpoint kept", err)
			}
			// Second delivery: load it, then end as the case says.
			func() {
				if tc.name == "panic" {
					defer func() { _ = recover() }()
				}
				err := call(t, cp, &sqsloop.Message{ID: "m-1", ReceiveCount: 2}, func(ctx context.Context, m *sqsloop.Message) error {
					b, ok, err := checkpoint.Load(ctx)
					if err != nil || !ok || string(b) != "step 3" {
						t.Errorf("Load on the redelivery: %q, %v, %v; want \"step 3\"", b, ok, err)
					}
					if tc.name == "panic" {
						panic("boom")
					}
					return tc.result
				})
				if !errors.Is(err, tc.result) {
					t.Errorf("the middleware returned %v, want the handler's %v", err, tc.result)
				}
			}()
			r, err := store.Get(t.Context(), key)
			if err != nil || r.State != tc.state {
				t.Fatalf("the record after the second delivery: %+v, %v; want it %s", r, err, tc.state)
			}
			// Third delivery: a finished job is answered from its mark.
			ran := false
			err = call(t, cp, &sqsloop.Message{ID: "m-1", ReceiveCount: 3}, func(ctx context.Context, m *sqsloop.Message) error {
				ran = true
				return nil
			})
			switch tc.state {
			case jobstate.Completed:
				if ran || err != nil {
					t.Errorf("a delivery of a job marked done: ran %v, %v; want it acked unrun", ran, err)
				}
			case jobstate.Failed:
				if ran || !errors.Is(err, sqsloop.ErrPermanent) || !errors.Is(err, checkpoint.ErrFailedBefore) || !contains(err.Error(), "poison") {
					t.Errorf("a delivery of a job marked failed: ran %v, %v; want a permanent failure saying why, unrun", ran, err)
				}
			default:
				if !ran {
					t.Errorf("a delivery of a job that is not finished did not run")
				}
			}
		})
	}
}

// The store is asked only when a checkpoint may exist: a first delivery's
// Load costs nothing, a handler that neither loads nor saves costs nothing
// on a first delivery and one read on a redelivery; a job that saved ends
// with one write, its mark.
func TestStoreCallsPerMessage(t *testing.T) {
	for _, tc := range []struct {
		name         string
		receiveCount int
		load, saves  int
		want         int64
	}{
		{"first delivery, no save", 1, 1, 0, 0},
		{"first delivery, 3 saves", 1, 1, 3, 3 + 1},
		{"redelivery, nothing read", 2, 0, 0, 1},
		{"redelivery, load finds none", 2, 2, 0, 1},
		{"redelivery, load and 2 saves", 2, 1, 2, 1 + 2 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &counting{}
			cp := newCheckpoints(t, store)
			err := call(t, cp, &sqsloop.Message{ID: "m", ReceiveCount: tc.receiveCount}, func(ctx context.Context, m *sqsloop.Message) error {
				for range tc.load {
					if _, _, err := checkpoint.Load(ctx); err != nil {
						return err
					}
				}
				for range tc.saves {
					if err := checkpoint.Save(ctx, []byte("x")); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := store.calls(); n != tc.want {
				t.Errorf("%d store calls (%d gets, %d puts, %d deletes), want %d", n, store.gets.Load(), store.puts.Load(), store.deletes.Load(), tc.want)
			}
		})
	}
}

// Save beats the heartbeat; a value over MaxSize is refused before the
// store; outside the middleware Save and Load say so.
func TestSaveBeatsAndChecks(t *testing.T) {
	store := &counting{}
	cp := newCheckpoints(t, store)
	hb := heartbeat.New()
	ctx := heartbeat.NewContext(t.Context(), hb)
	_ = cp.Middleware(func(ctx context.Context, m *sqsloop.Message) error {
		if err := checkpoint.Save(ctx, make([]byte, checkpoint.MaxSize+1)); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("Save of MaxSize+1 bytes: %v, want ErrInvalidArgument", err)
		}
		if store.puts.Load() != 0 {
			t.Errorf("the oversized value reached the store")
		}
		return checkpoint.Save(ctx, []byte("ok"))
	})(ctx, &sqsloop.Message{ID: "m", ReceiveCount: 1})
	if hb.LastBeat().IsZero() {
		t.Errorf("Save did not beat the heartbeat")
	}
	if err := checkpoint.Save(t.Context(), []byte("x")); !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Errorf("Save outside the middleware: %v, want ErrNoCheckpoint", err)
	}
	if _, _, err := checkpoint.Load(t.Context()); !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Errorf("Load outside the middleware: %v, want ErrNoCheckpoint", err)
	}
}

// New checks its arguments, naming each bad one.
func TestNewChecks(t *testing.T) {
	_, err := checkpoint.New(nil, checkpoint.Config{Retention: time.Second, Queue: string(make([]byte, 300))})
	if !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Fatalf("New: %v, want ErrInvalidArgument", err)
	}
	for _, field := range []string{"store is nil", "Config.Retention", "Config.Queue"} {
		if !contains(err.Error(), field) {
			t.Errorf("New's error does not name %s: %v", field, err)
		}
	}
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}
