package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// expiredBacklog opens a Store on a new file at path whose queue "old"
// (retention 60 s) holds n messages sent two minutes ago, written straight
// into the table (n sends would take minutes of commits), and returns the
// Store.
func expiredBacklog(t testing.TB, path string, n int) *sqlmailbox.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	old, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "old", RetentionPeriod: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sent := time.Now().Add(-2 * time.Minute).UnixMicro()
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?1)
		INSERT INTO sqsloop_messages (queue_id, message_id, body, sent_at, visible_at)
		SELECT (SELECT id FROM sqsloop_queues WHERE name = 'old'), 'old-' || i, 'expired', ?2, ?2 FROM k`, n, sent); err != nil {
		t.Fatal(err)
	}
	return st
}

// holdLeases sends 10 messages to the queue "leases" of st and receives
// them with one-hour leases, returning their extensions to one hour more.
func holdLeases(t testing.TB, st *sqlmailbox.Store) (*sqlmailbox.Mailbox, []sqsloop.VisibilityChange) {
	t.Helper()
	ctx := context.Background()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "leases"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mb.Close() })
	mailboxtest.SendBodies(ctx, t, mb, "l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9")
	var extend []sqsloop.VisibilityChange
	for _, m := range mailboxtest.ReceiveN(ctx, t, mb, 10, 10*time.Second, time.Hour) {
		extend = append(extend, sqsloop.VisibilityChange{ReceiptHandle: m.ReceiptHandle, Timeout: time.Hour})
	}
	return mb, extend
}

// A sweep with a backlog leaves this process's other calls their turns:
// it deletes 5,000 expired messages in transactions of at most 500 rows
// and waits between them, and a goroutine extending leases back to back on
// the same connection gets in between them; before, the sweep deleted a
// queue's expired messages in one transaction, and the extensions waited
// for all of it (3 got in, between its transactions of whole queues).
func TestSweepLeavesOtherCallsTheirTurns(t *testing.T) {
	st := expiredBacklog(t, filepath.Join(t.TempDir(), "q.db"), 5000)
	mb, extend := holdLeases(t, st)
	ctx := t.Context()
	var during atomic.Int64
	sweeping := make(chan struct{})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		<-sweeping
		for {
			select {
			case <-done:
				return
			default:
			}
			errs, err := mb.ChangeVisibility(ctx, extend)
			if err != nil || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
				t.Errorf("an extension during the sweep: %v %v", errs, err)
				return
			}
			select {
			case <-done:
				return
			default:
				during.Add(1)
			}
		}
	})
	close(sweeping)
	stats, err := st.Sweep(ctx)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep %+v; %d extensions during it", stats, during.Load())
	if stats.RetentionDeleted != 5000 {
		t.Errorf("the sweep deleted %d expired messages, want 5000", stats.RetentionDeleted)
	}
	if during.Load() < 5 {
		t.Errorf("%d extensions completed while the sweep ran, want at least 5 (one between each two of its transactions)", during.Load())
	}
}

// sweepBacklog is the backlog BenchmarkSweepBacklog sweeps: 100,000, or
// SQSLOOP_SWEEP_BACKLOG.
func sweepBacklog(b *testing.B) int {
	if v := os.Getenv("SQSLOOP_SWEEP_BACKLOG"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("SQSLOOP_SWEEP_BACKLOG=%q: want a positive number", v)
		}
		return n
	}
	return 100_000
}

// BenchmarkSweepBacklog sweeps a queue of 100,000 expired messages on a
// SQLite file while this process extends 10 leases every 100 ms (a lease
// owner's interval) and another process (a child: "poll") receives from
// the file every 10 ms, and reports the largest delay of an extension (from
// when it was due to when it returned), the other process's longest
// receive, and the sweep's duration. Run it once: -benchtime 1x.
func BenchmarkSweepBacklog(b *testing.B) {
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "q.db")
		st := expiredBacklog(b, path, sweepBacklog(b))
		mb, extend := holdLeases(b, st)
		ctx := context.Background()
		child := childproc.Start(b, childEnv+"=poll "+path)
		child.Expect(b, "ready", time.Minute)
		var waits []time.Duration
		var failed []string
		var read sync.WaitGroup
		read.Go(func() {
			for line := range child.Lines {
				f := strings.Fields(line)
				if len(f) >= 2 && (f[0] == "took" || f[0] == "failed") {
					d, _ := time.ParseDuration(strings.TrimSuffix(f[1], ":"))
					waits = append(waits, d)
				}
				if f[0] == "failed" {
					failed = append(failed, line)
				}
			}
		})
		var worst time.Duration
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				var due time.Time
				select {
				case <-done:
					return
				case due = <-tick.C:
				}
				if _, err := mb.ChangeVisibility(ctx, extend); err != nil {
					b.Errorf("an extension: %v", err)
					return
				}
				worst = max(worst, time.Since(due))
			}
		})
		stats, err := st.Sweep(ctx)
		close(done)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
		_ = child.Cmd.Process.Kill()
		read.Wait()
		slowest := slices.Max(append(waits, 0))
		b.ReportMetric(float64(worst.Milliseconds()), "ms/worst-extension")
		b.ReportMetric(float64(slowest.Milliseconds()), "ms/worst-other-receive")
		b.ReportMetric(stats.Duration.Seconds(), "s/sweep")
		b.Logf("%d expired deleted in %v; extensions every 100 ms, the latest returned %v after it was due; the other process's %d receives, the slowest %v; %s",
			stats.RetentionDeleted, stats.Duration.Round(time.Millisecond), worst.Round(time.Millisecond), len(waits), slowest.Round(time.Millisecond),
			strings.Join(failed, "; "))
	}
}

// pollRole is the child role "poll" of BenchmarkSweepBacklog: it receives
// from the queue "work" of the file every 10 ms, writing "took D" (a Go
// duration) for each receive, until killed, or "failed D: error" and exits
// when one fails.
func pollRole(path string) int {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return childproc.Failed(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "work"})
	if err != nil {
		return childproc.Failed(err)
	}
	childproc.Say("ready")
	for {
		start := time.Now()
		if _, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute}); err != nil {
			childproc.Say("failed %v: %v", time.Since(start), err)
			return childproc.Failed(fmt.Errorf("receive: %w", err))
		}
		childproc.Say("took %v", time.Since(start))
		time.Sleep(10 * time.Millisecond) // the role's poll interval
	}
}
