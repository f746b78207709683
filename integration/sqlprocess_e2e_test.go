package integration

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// sqlDatabase is a database of one test for consumer processes to share:
// a SQLite file, or a fresh PostgreSQL database on PG_DSN's server.
type sqlDatabase struct {
	dialect, target string
	store           *sqlmailbox.Store
}

// forEachSQLDatabase runs body on a SQLite file and on a fresh PostgreSQL
// database, as subtests "sqlite" and "postgres", in parallel.
func forEachSQLDatabase(t *testing.T, body func(t *testing.T, db sqlDatabase)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "jobs.db")
		st, err := sqlite.Open(t.Context(), path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		body(t, sqlDatabase{"sqlite", path, st})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := sqlharness.FreshDatabase(t)
		st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		body(t, sqlDatabase{"postgres", dsn, st})
	})
}

// counts reads the queue's messages by state.
func counts(t *testing.T, mb sqsloop.Mailbox) sqsloop.QueueAttributes {
	t.Helper()
	a, err := mb.(sqsloop.AttributesReader).QueueAttributes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The crash test: a consumer process (8 handlers of 50 ms, 2 s leases
// extended while they beat) is killed with SIGKILL mid-batch, after 100 of
// 300 jobs are done; a second process, started at once on the same
// database, says how many it found waiting and runs until the queue is
// empty. Every job is done at least once, none is lost (the queue ends
// empty), and the jobs the first process was running when killed are run
// again, once their leases lapse (they were never acked).
func TestE2ESQLSIGKILLMidBatchThenRestart(t *testing.T) {
	t.Parallel()
	forEachSQLDatabase(t, func(t *testing.T, db sqlDatabase) {
		ctx := t.Context()
		mb, err := db.store.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs"})
		if err != nil {
			t.Fatal(err)
		}
		defer mb.Close()
		ids := mailboxtest.SendBodies(ctx, t, mb, jobBodies(300)...)
		cfg := sqlChildConfig{Dialect: db.dialect, Target: db.target, Queue: "jobs", Lease: 2 * time.Second, Hold: 50 * time.Millisecond, Concurrency: 8}

		first := startChild(t, sqlChildEnv, cfg)
		started, done := map[string]bool{}, map[string]int{}
		for line := range first.Lines {
			if id, ok := strings.CutPrefix(line, "start "); ok {
				started[id] = true
			}
			if id, ok := strings.CutPrefix(line, "done "); ok {
				done[id]++
				if len(done) == 100 {
					if err := first.Cmd.Process.Kill(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if err := <-first.Exited; err == nil || len(done) >= len(ids) {
			t.Fatalf("the first process exited with %v after %d jobs, want killed mid-run; stderr:\n%s", err, len(done), first.Stderr())
		}
		var running []string // started, not done, at the kill
		for id := range started {
			if done[id] == 0 {
				running = append(running, id)
			}
		}
		doneBefore := len(done)

		cfg.ExitWhenEmpty = true
		second := startChild(t, sqlChildEnv, cfg)
		waiting := -1
		again := map[string]bool{}
		for line := range second.Lines {
			if n, ok := strings.CutPrefix(line, "waiting "); ok {
				waiting, _ = strconv.Atoi(n)
			}
			if id, ok := strings.CutPrefix(line, "done "); ok {
				if done[id] > 0 {
					again[id] = true
				}
				done[id]++
			}
		}
		if err := <-second.Exited; err != nil {
			t.Fatalf("the second process: %v; stderr:\n%s", err, second.Stderr())
		}
		var lost []string
		for _, id := range ids {
			if done[id] == 0 {
				lost = append(lost, id)
			}
		}
		for _, id := range running {
			if done[id] == 0 {
				t.Errorf("job %s, running at the kill, never finished", id)
			}
		}
		t.Logf("%s: SIGKILL after %d of %d jobs done, %d running; the restart found %d waiting and finished them; "+
			"%d jobs done twice (done before the kill, their acks lost with the process), %d lost",
			db.dialect, doneBefore, len(ids), len(running), waiting, len(again), len(lost))
		if len(lost) > 0 {
			t.Errorf("%d jobs never done: %v", len(lost), lost)
		}
		if waiting < len(ids)-doneBefore || waiting > len(ids) {
			t.Errorf("the restart found %d waiting, want between %d (not done) and %d", waiting, len(ids)-doneBefore, len(ids))
		}
		if a := counts(t, mb); a.ApproximateMessages+a.ApproximateMessagesInFlight+a.ApproximateMessagesDelayed != 0 {
			t.Errorf("the queue holds %+v after the restart drained it", a)
		}
	})
}

// A deploy loses nothing, through a real process on a database: a consumer
// process (2 handlers of 3 s, 30 s leases, 20 s long polls) gets SIGTERM
// while both run. It starts no other job, finishes and acks the two, and
// exits 0; the queue then holds the other 18, visible at once (not held for
// the 30 s leases), and nothing in flight.
func TestE2ESQLSIGTERMDrainsConsumerProcess(t *testing.T) {
	t.Parallel()
	forEachSQLDatabase(t, func(t *testing.T, db sqlDatabase) {
		ctx := t.Context()
		mb, err := db.store.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: longLease})
		if err != nil {
			t.Fatal(err)
		}
		defer mb.Close()
		mailboxtest.SendBodies(ctx, t, mb, jobBodies(20)...)
		p := startChild(t, sqlChildEnv, sqlChildConfig{Dialect: db.dialect, Target: db.target, Queue: "jobs", Lease: longLease, Hold: 3 * time.Second, Concurrency: 2})
		running := p.awaitStarts(t, 2, patience)
		if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		started, done, exit, err := p.rest(t, 30*time.Second)
		t.Logf("%s: running at SIGTERM %v, started after %v, finished %v; %s", db.dialect, running, started, done, exit)
		if err != nil {
			t.Errorf("the process exited with %v after SIGTERM, want 0; stderr:\n%s", err, p.Stderr())
		}
		if len(started) != 0 {
			t.Errorf("jobs started after SIGTERM: %v", started)
		}
		if !slices.Equal(sorted(done), sorted(running)) {
			t.Errorf("jobs finished after SIGTERM: %v, want the two running: %v", done, running)
		}
		if a := counts(t, mb); a.ApproximateMessages != 18 || a.ApproximateMessagesInFlight != 0 {
			t.Errorf("after the drain: %d visible, %d in flight; want 18 and 0", a.ApproximateMessages, a.ApproximateMessagesInFlight)
		}
	})
}
