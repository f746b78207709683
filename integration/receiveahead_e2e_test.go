package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/visibility"
)

// The receive-ahead scenarios: 2 handlers get through fastRuns quick
// messages, so the consumer measures quick handlers next to a 20 ms receive
// round trip and fills its receive-ahead buffer (up to 20 per handler slot);
// then both handlers stall, beating, and the buffer stays full of received
// messages no handler can start.
const (
	// aheadJobs is how many messages the scenarios send.
	aheadJobs = 150
	// fastRuns is how many handler runs return at once before the stall.
	fastRuns = 50
	// aheadRoundTrip is the receive round trip lateMailbox adds, on both
	// backends: long enough next to a quick handler that the receive-ahead
	// grows to its cap.
	aheadRoundTrip = 20 * time.Millisecond
	// minBuffered is the fewest received-but-unstarted messages the
	// scenarios accept as a full buffer (the cap is 40 at concurrency 2).
	minBuffered = 10
)

// stallingRun is a consumer whose handlers return at once for fastRuns runs,
// then beat every 200 ms without returning until release is closed.
type stallingRun struct {
	c       *consumer.Consumer
	runs    *runLog
	stalled chan struct{} // one value per handler that stalls
	release chan struct{}
}

// startStallingRun starts a stallingRun on q's mailbox behind lateMailbox,
// with 20 s long polls, concurrency 2 and vis's leases extended by vis.
// It returns once both handlers have stalled and the buffer has had 1 s to
// fill, and fails the test unless at least minBuffered messages wait in it.
func startStallingRun(t *testing.T, h mailboxtest.Harness, q mailboxtest.Queue, vis time.Duration) (r *stallingRun, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	ctx := t.Context()
	r = &stallingRun{runs: newRunLog(), stalled: make(chan struct{}, 2), release: make(chan struct{})}
	var n atomic.Int32
	cfg := e2eConfig()
	cfg.Concurrency = 2
	cfg.WaitTime = sqsloop.MaxWaitTime
	cfg.VisibilityTimeout = vis
	cfg.Visibility = visibility.Config{Interval: vis / 4, Extension: vis}
	c, err := consumer.New(&lateMailbox{Mailbox: q.Mailbox, delay: aheadRoundTrip}, r.runs.handler(func(ctx context.Context) error {
		if n.Add(1) <= fastRuns {
			return nil
		}
		select {
		case <-r.release:
			return nil
		default:
		}
		r.stalled <- struct{}{}
		for {
			heartbeat.Beat(ctx)
			select {
			case <-r.release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			default:
			}
			if err := h.Sleep(ctx, 200*time.Millisecond); err != nil {
				return err
			}
		}
	}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.c = c
	cancel, done = startRun(t, c)
	for range 2 {
		select {
		case <-r.stalled:
		case <-time.After(patience):
			t.Fatalf("%s: the handlers did not stall within %v: stats %+v", h.Name(), patience, c.Stats())
		}
	}
	if err := h.Sleep(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if b := r.buffered(); b < minBuffered {
		t.Fatalf("%s: %d messages in the receive-ahead buffer once the handlers stalled, want ≥ %d: stats %+v",
			h.Name(), b, minBuffered, c.Stats())
	}
	return r, cancel, done
}

// buffered returns how many received messages no handler has started.
func (r *stallingRun) buffered() int64 {
	st := r.c.Stats()
	return st.Received - st.Started - st.GivenBack
}

// Messages waiting in the receive-ahead buffer keep their leases while they
// wait: with 2 s leases and handlers stalled for 2.5 s, none is lost, none
// comes back, and each runs once after the stall.
func TestE2EBufferedMessagesKeepTheirLeases(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		vis := 2 * time.Second
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: vis})
		defer cleanup()
		ids := mailboxtest.SendBodies(ctx, t, q.Mailbox, jobBodies(aheadJobs)...)
		r, cancel, done := startStallingRun(t, h, q, vis)
		buffered := r.buffered()
		// 1 s already waited; 1.5 s more is past the 2 s lease a buffered
		// message had when it arrived.
		if err := h.Sleep(ctx, 1500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		close(r.release)
		if !waitUntil(ctx, h, patience, 50*time.Millisecond, func() bool { return r.runs.finishedAll(ids) }) {
			t.Fatalf("%s: not every message finished within %v of the stall's end: %s", h.Name(), patience, r.runs.figures(ids))
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		f := r.runs.figures(ids)
		st := r.c.Stats()
		t.Logf("%s: %d buffered for 2.5 s behind stalled handlers; %s; stats %+v", h.Name(), buffered, f, st)
		if f.duplicates != 0 || f.never != 0 || st.LeasesLost != 0 || st.Redelivered != 0 {
			t.Fatalf("%s: want each message run once, no lease lost, nothing redelivered: %s; stats %+v", h.Name(), f, st)
		}
	})
}

// The drain gives the receive-ahead buffer back at once, while the stalled
// handlers still run: with 30 s leases, every message not started is
// visible to a second receiver before the handlers are let go (a buffered
// message not given back would stay hidden for 30 s), and the running ones
// are acked when they finish.
func TestE2EDrainGivesBackTheBuffer(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: longLease})
		defer cleanup()
		mailboxtest.SendBodies(ctx, t, q.Mailbox, jobBodies(aheadJobs)...)
		r, _, done := startStallingRun(t, h, q, longLease)
		buffered := r.buffered()

		shutdown := make(chan error, 1)
		go func() { shutdown <- r.c.Shutdown(context.Background()) }()
		for r.c.Ready() == nil { // the drain has begun
			if err := h.Sleep(ctx, time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		started := int(r.c.Stats().Started)
		var back int
		for back < aheadJobs-started {
			msgs := leftovers(ctx, t, q.Mailbox, time.Second)
			if len(msgs) == 0 {
				break
			}
			back += len(msgs)
		}
		close(r.release) // the stalled handlers finish and are acked
		if err := <-shutdown; err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		st := r.c.Stats()
		t.Logf("%s: %d buffered when the drain began; %d visible to a second receiver while the handlers ran; stats %+v", h.Name(), buffered, back, st)
		if want := aheadJobs - started; back != want {
			t.Fatalf("%s: a second receiver got %d messages while the handlers ran, want the %d not started (buffered ones not given back stay hidden for %v)",
				h.Name(), back, want, longLease)
		}
		if st.GivenBack != buffered || st.Acked != int64(started) {
			t.Fatalf("%s: stats %+v: want the %d buffered given back and the %d started acked", h.Name(), st, buffered, started)
		}
	})
}
