package integration

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// receiveLog records the consumer's receives and handler starts, for the
// time from a mailbox's return to the first receive that succeeds.
type receiveLog struct {
	sqsloop.NopObserver
	mu       sync.Mutex
	receives []sqsloop.ReceiveEvent // Messages dropped
	starts   []time.Time
}

func (r *receiveLog) Received(_ context.Context, e sqsloop.ReceiveEvent) {
	e.Messages = nil
	r.mu.Lock()
	r.receives = append(r.receives, e)
	r.mu.Unlock()
}

func (r *receiveLog) ProcessStart(ctx context.Context, _ *sqsloop.Message) context.Context {
	r.mu.Lock()
	r.starts = append(r.starts, time.Now())
	r.mu.Unlock()
	return ctx
}

// after returns, for a mailbox back at back: when the first receive that
// succeeded after it came back, when the first handler started after it,
// and how many receives failed while the mailbox was down (from down).
func (r *receiveLog) after(down, back time.Time) (received, started time.Time, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.receives {
		end := e.Start.Add(e.Duration)
		switch {
		case e.Err != nil && end.After(down) && e.Start.Before(back):
			failed++
		case e.Err == nil && end.After(back) && received.IsZero():
			received = end
		}
	}
	for _, s := range r.starts {
		if s.After(back) {
			return received, s, failed
		}
	}
	return received, time.Time{}, failed
}

// resumeAfterOutage runs a consumer (default settings but for the
// visibility timeout: 20 s long polls) through 300 jobs of 20 ms on mb;
// once 50 are done, stop takes the mailbox away for outage and start
// brings it back. It checks that the first receive that succeeds after the
// mailbox is back completes within bound of it (the promise is a second:
// the back-off stops at 1 s, and the probe after it is a short poll), that
// Ready is nil then, and that every job runs.
//
// A receive the outage cuts off after the server handed out its messages
// (the answer lost on the way) leaves them hidden for their visibility
// timeout, as on SQS; they run once it lapses. So the visibility timeout
// is the outage and 5 s (the default, 5 min, would outlast the test's
// minute): long enough that no lease of a job done before the outage
// lapses while its ack waits for the mailbox to come back.
func resumeAfterOutage(t *testing.T, mb sqsloop.Mailbox, outage, bound time.Duration, stop, start func()) {
	ctx := t.Context()
	ids := mailboxtest.SendBodies(ctx, t, mb, jobBodies(300)...)
	log := &receiveLog{}
	runs := newRunLog()
	var fifty sync.Once
	var done atomic.Int64
	reached := make(chan struct{})
	c, err := consumer.New(mb, runs.handler(func(context.Context) error {
		time.Sleep(20 * time.Millisecond)
		if done.Add(1) >= 50 {
			fifty.Do(func() { close(reached) })
		}
		return nil
	}), consumer.Config{Concurrency: 4, VisibilityTimeout: outage + 5*time.Second, Logger: quietLogger, Observer: log})
	if err != nil {
		t.Fatal(err)
	}
	stopRun := runConsumer(t, c)
	if !awaitClosed(reached, time.Minute) {
		t.Fatal("50 jobs not done in a minute")
	}
	stop()
	down := time.Now()
	time.Sleep(outage)
	start()
	back := time.Now()
	for !runs.finishedAll(ids) && time.Since(back) < time.Minute {
		time.Sleep(10 * time.Millisecond)
	}
	received, started, failed := log.after(down, back)
	ready := c.Ready()
	if err := stopRun(); err != nil {
		t.Errorf("Run = %v", err)
	}
	f := runs.figures(ids)
	t.Logf("down %v: %d receives failed meanwhile; back: first receive answered after %v, first handler started after %v; %s",
		outage, failed, received.Sub(back).Round(time.Millisecond), started.Sub(back).Round(time.Millisecond), f)
	if received.IsZero() || received.Sub(back) > bound {
		t.Errorf("first successful receive %v after the mailbox came back, want ≤ %v", received.Sub(back), bound)
	}
	if ready != nil {
		t.Errorf("Ready() = %v after the mailbox came back", ready)
	}
	if f.never > 0 {
		t.Errorf("%d jobs never ran: %s", f.never, f)
	}
}

// Back to work within a second of PostgreSQL coming back: a server of the
// test's own crashes (every connection dropped) with 250 jobs left, stays
// down 10 s, and is started again; the consumer's first receive succeeds
// within a second of the server accepting connections (bound 2 s, for the
// first connection and a loaded machine), Ready is nil, and every job runs.
// (Before, the receive back-off had grown to 10 s by then: the consumer sat
// idle up to 10 s after the server was back, 7 s in the report.)
func TestE2EReceivingResumesAfterPostgreSQLRestart(t *testing.T) {
	srv := sqlharness.StartPGServer(t)
	ctx := t.Context()
	st, err := postgres.Open(ctx, srv.DSN(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	resumeAfterOutage(t, mb, 10*time.Second, 2*time.Second,
		func() {
			if err := srv.Crash(); err != nil {
				t.Fatal(err)
			}
		},
		func() {
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
		})
}

// The same on the SQS server, its endpoint gone for 10 s (connections
// refused by a proxy in front of it) and back on the same port.
func TestE2EReceivingResumesAfterSQSEndpointOutage(t *testing.T) {
	proxy, mb, _ := proxiedQueue(t)
	resumeAfterOutage(t, mb, 10*time.Second, 2*time.Second, proxy.down, proxy.up)
}
