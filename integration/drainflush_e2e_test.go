package integration

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the second connection that holds the write lock

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// gatedHandlers are n handlers that beat until let() lets them return nil.
type gatedHandlers struct {
	started chan struct{} // one send per handler start
	release chan struct{}
	once    sync.Once
}

func newGatedHandlers(n int) *gatedHandlers {
	return &gatedHandlers{started: make(chan struct{}, n), release: make(chan struct{})}
}

func (g *gatedHandlers) handle(ctx context.Context, m *sqsloop.Message) error {
	g.started <- struct{}{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		heartbeat.Beat(ctx)
		select {
		case <-g.release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (g *gatedHandlers) awaitStarts(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-g.started:
		case <-time.After(patience):
			t.Fatalf("%d of %d handlers started in %v", i, n, patience)
		}
	}
}

func (g *gatedHandlers) let() { g.once.Do(func() { close(g.release) }) }

// drainThroughSlowAcks runs 8 messages of mb through a consumer with the
// default settings (a 25 s drain budget, 5 min leases): once the 8
// handlers run, Shutdown begins the drain, hold makes the mailbox slow
// (and returns the function that ends that), the handlers return, and
// their acks meet the slow mailbox for slowFor. It checks that Run returns
// nil once the mailbox is quick again, well inside the budget, with the 8
// acked, none unsent, and the drain's last line saying so; and that check
// (the queue, read past the slow part) counts none left.
func drainThroughSlowAcks(t *testing.T, mb sqsloop.Mailbox, check sqsloop.Mailbox, slowFor time.Duration, hold func() (end func())) {
	ctx := t.Context()
	mailboxtest.SendBodies(ctx, t, mb, jobBodies(8)...)
	var logs harness.Buffer // the test reads while the logger writes
	h := newGatedHandlers(8)
	c, err := consumer.New(mb, h.handle, consumer.Config{Concurrency: 8, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.let()
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(context.Background()) }()
	h.awaitStarts(t, 8)
	go func() { _ = c.Shutdown(context.Background()) }()
	for !strings.Contains(logs.String(), "consumer: drain began") {
		time.Sleep(time.Millisecond)
	}
	end := hold()
	released := time.AfterFunc(slowFor, end)
	defer released.Stop()
	t0 := time.Now()
	h.let()
	err, ok := awaitErr(runErr, time.Minute)
	if !ok {
		t.Fatalf("Run has not returned a minute after the handlers did; stats %+v", c.Stats())
	}
	took := time.Since(t0)
	st := c.Stats()
	t.Logf("Run = %v %v after the handlers returned (the mailbox slow for %v): %d of 8 acked, %d unsent, %d ack retries",
		err, took.Round(time.Millisecond), slowFor, st.Acked, st.AckUnsent, st.AckRetries)
	if err != nil || st.Acked != 8 || st.AckUnsent != 0 {
		t.Errorf("Run = %v; %d acked, %d unsent: want nil, the 8 acked within the budget", err, st.Acked, st.AckUnsent)
	}
	if took < slowFor-100*time.Millisecond {
		t.Errorf("Run returned %v after the handlers, before the mailbox was quick again (%v): was it slow?", took, slowFor)
	}
	if !strings.Contains(logs.String(), `msg="consumer: drain ended" given_back=0 finished=8 abandoned=0 acks_unsent=0`) {
		t.Errorf("the drain's last line does not say 8 finished, 0 unsent:\n%s", logs.String())
	}
	if a := counts(t, check); a.ApproximateMessages != 0 || a.ApproximateMessagesInFlight != 0 {
		t.Errorf("queue: %d visible, %d in flight after the drain, want none: every message deleted", a.ApproximateMessages, a.ApproximateMessagesInFlight)
	}
}

// The acks decided during a drain are sent within the drain budget, on
// SQLite: while the 8 handlers finish, another connection holds the
// database's write lock for 1.5 s (BEGIN IMMEDIATE), so the deletes wait
// for it (the busy timeout). They are sent once it is let go, and Run
// returns then, nil, all 8 acked. (Before, the lease owner flushed for
// 1 s: Run returned after about 1.3 s with none of the 8 acked, and they
// ran again 5 minutes later.)
func TestE2EDrainAcksThroughAHeldSQLiteLock(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queues.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	drainThroughSlowAcks(t, mb, mb, 1500*time.Millisecond, func() func() {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		return func() {
			if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
				t.Error(err)
			}
			_ = conn.Close()
		}
	})
}

// The same on the SQS server through a slow network: while the 8 handlers
// finish, every DeleteMessageBatch takes 1.5 s on its way (a proxy in
// front of the server). The deletes land, Run returns nil, all 8 acked.
// (Before: the flush cut the calls off after 1 s, none acked.)
func TestE2EDrainAcksThroughSQSLatency(t *testing.T) {
	proxy, mb, direct := proxiedQueue(t)
	drainThroughSlowAcks(t, mb, direct, 1500*time.Millisecond, func() func() {
		proxy.slow("DeleteMessageBatch", 1500*time.Millisecond)
		return func() {} // the latency stays: each call takes 1.5 s
	})
}
