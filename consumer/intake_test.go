package consumer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// The receive-ahead depth is Little's law on what was measured: slots ×
// round trip / handler time, rounded down, at most maxAhead; 0 until a full
// round of handler runs and a round trip are measured, and 0 for handlers
// slow next to the round trip; it at most doubles per measurement, from
// slots.
func TestReceiveAheadDepth(t *testing.T) {
	for _, tc := range []struct {
		name          string
		slots         int
		handler, trip time.Duration
		want          int
	}{
		{"nothing measured", 16, 0, 0, 0},
		{"no round trip yet", 16, time.Millisecond, 0, 0},
		{"long jobs", 16, 5 * time.Second, 10 * time.Millisecond, 0},
		{"one round trip per handler run", 16, 10 * time.Millisecond, 10 * time.Millisecond, 16},
		{"fast handlers, 10 ms round trip", 16, time.Millisecond, 10 * time.Millisecond, 160},
		{"capped", 16, 10 * time.Microsecond, 10 * time.Millisecond, maxAhead},
		{"capped by the concurrency", 2, 10 * time.Microsecond, 10 * time.Millisecond, 2 * aheadPerSlot},
		{"rounded down", 4, 30 * time.Millisecond, 10 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newIntake(tc.slots)
			if tc.handler > 0 {
				for range tc.slots {
					in.handled(tc.handler)
				}
			}
			if tc.trip > 0 {
				in.received(10, 10, tc.trip)
				if d := in.depth(); d > tc.slots {
					t.Fatalf("depth %d after one measurement, want at most slots (%d)", d, tc.slots)
				}
				for range maxAhead {
					in.received(10, 10, tc.trip)
				}
			}
			if got := in.depth(); got != tc.want {
				t.Fatalf("depth = %d, want %d", got, tc.want)
			}
			if n, _ := in.take(0, 1000, true); n != tc.slots+tc.want {
				t.Fatalf("take = %d, want slots + depth = %d", n, tc.slots+tc.want)
			}
		})
	}
	// The first runs of a queue of long jobs may be quick ones (a job that
	// fails at once): the depth stays 0 until a full round of slots has
	// run, and the long runs weigh more than the quick ones.
	in := newIntake(16)
	in.received(10, 10, 10*time.Millisecond)
	for range 3 {
		in.handled(time.Microsecond)
		in.received(10, 10, 10*time.Millisecond)
	}
	if d := in.depth(); d != 0 {
		t.Fatalf("depth %d after 3 quick runs, want 0 until 16 runs", d)
	}
	for range 13 {
		in.handled(500 * time.Millisecond)
	}
	in.received(10, 10, 10*time.Millisecond)
	if d := in.depth(); d != 0 {
		t.Fatalf("depth %d with mostly 500 ms runs and a 10 ms round trip, want 0", d)
	}
	// A receive that came back short may have waited in its long poll: it
	// does not count as a round trip.
	in = newIntake(16)
	for range 16 {
		in.handled(time.Millisecond)
	}
	in.received(10, 3, 20*time.Second)
	if d := in.depth(); d != 0 {
		t.Fatalf("a short receive set the depth to %d", d)
	}
}

// delayedReceives gives every receive a round trip of delay.
type delayedReceives struct {
	sqsloop.Mailbox
	delay time.Duration
}

func (d delayedReceives) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	time.Sleep(d.delay)
	return d.Mailbox.Receive(ctx, req)
}

// Messages waiting in the receive-ahead buffer when shutdown begins are
// given back at once, never started, while the running ones finish.
func TestShutdownGivesBackTheBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(300)...)
		release := make(chan struct{})
		var started atomic.Int32
		cfg := fast()
		cfg.Concurrency = 2
		c := mustNew(t, delayedReceives{q, 10 * time.Millisecond}, func(ctx context.Context, m *sqsloop.Message) error {
			if started.Add(1) > 40 {
				<-release // the handlers get stuck: what arrives waits
			}
			time.Sleep(time.Millisecond) // 1 ms handlers, 10 ms round trips: ahead 20
			return nil
		}, cfg)
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		qs := q.Stats()
		waiting := int(qs.InFlight) - 2 // all but the two running handlers'
		if c.intake.depth() == 0 || waiting < 4 {
			t.Fatalf("depth %d, %d waiting: want a receive-ahead buffer (queue %+v)", c.intake.depth(), waiting, qs)
		}
		shutdown := make(chan error, 1)
		go func() { shutdown <- c.Shutdown(context.Background()) }()
		synctest.Wait() // no virtual time passes
		if qs := q.Stats(); qs.InFlight != 2 {
			t.Fatalf("at shutdown: queue %+v; want all but the 2 running visible again at once", qs)
		}
		close(release)
		if err := <-shutdown; err != nil {
			t.Fatal(err)
		}
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
		if st := c.Stats(); st.Started != 42 || st.GivenBack != int64(waiting) {
			t.Fatalf("stats %+v: want 42 started, %d given back", st, waiting)
		}
	})
}

// Two consumers sharing a queue of long jobs: neither holds a job it
// cannot start while the other has a free handler slot (the receive-ahead
// depth stays 0), and no job is received twice.
func TestLongJobsAreNotOverPulled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(40)...)
		var mu sync.Mutex
		counts := map[string]int{}
		maxWait := time.Duration(0)
		handler := func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			counts[m.Body]++
			maxWait = max(maxWait, time.Since(m.ReceivedAt))
			mu.Unlock()
			return beatFor(ctx, 5*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}
		cfg := fast()
		cfg.Concurrency = 16
		var consumers []*Consumer
		var stops []func() error
		for range 2 {
			c := mustNew(t, delayedReceives{q, 10 * time.Millisecond}, handler, cfg)
			consumers = append(consumers, c)
			stops = append(stops, start(t, c))
		}
		time.Sleep(time.Minute)
		for _, stop := range stops {
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, b := range bodies(40) {
			if counts[b] != 1 {
				t.Fatalf("%s ran %d times, want once", b, counts[b])
			}
		}
		for i, c := range consumers {
			if d := c.intake.depth(); d != 0 {
				t.Errorf("consumer %d: receive-ahead depth %d with 5 s jobs, want 0", i, d)
			}
			if st := c.Stats(); st.Redelivered != 0 {
				t.Errorf("consumer %d: %d redelivered", i, st.Redelivered)
			}
		}
		// 40 jobs, 32 slots: the last 8 stay in the queue until a slot
		// frees, and are received then; none waits in a consumer's buffer
		// (that would be a whole job's length, 5 s).
		if maxWait >= time.Second {
			t.Fatalf("a job waited %v between its receive and its start", maxWait)
		}
	})
}

// When handlers stall, the consumer stops receiving: it holds the running
// messages and the receive-ahead's worth (capped by the concurrency), no
// more.
func TestStalledHandlersStopTheReceives(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(500)...)
		release := make(chan struct{})
		var started atomic.Int32
		cfg := fast()
		cfg.Concurrency = 2
		c := mustNew(t, delayedReceives{q, 10 * time.Millisecond}, func(ctx context.Context, m *sqsloop.Message) error {
			if started.Add(1) > 40 {
				<-release
			}
			time.Sleep(time.Millisecond)
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(time.Second)
		calls, held := c.Stats().ReceiveCalls, q.Stats().InFlight
		time.Sleep(time.Minute)
		if st := c.Stats(); st.ReceiveCalls != calls {
			t.Fatalf("%d receives after the buffer filled, want none", st.ReceiveCalls-calls)
		}
		if depth := c.intake.depth(); held > 2+depth || depth > 2*aheadPerSlot {
			t.Fatalf("%d messages held with a depth of %d; want at most 2 running + the depth, and the depth at most %d (2 slots)", held, depth, 2*aheadPerSlot)
		}
		close(release)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}
