package integration

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
	"github.com/sqsloop/sqsloop/sqsmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// childEnv names the environment variable that makes this test binary a
// consumer process (childMain) instead of running tests; its value is the
// child's childConfig, in JSON.
const childEnv = "SQSLOOP_E2E_CHILD"

// childConfig is what a child consumer process runs: a consumer of one
// queue, with Concurrency handlers (0: 2), 20 s long polls (what users
// run), leases of Lease extended by Lease every min(1 s, Lease/4), a 10 s
// drain, in the zero lifecycle.LoopGroup (SIGTERM and SIGINT drain). Its
// handler beats every 100 ms for Hold and returns nil.
//
// The queue is on an SQS-compatible server (Endpoint, Region,
// DummyCredentials, QueueURL) or, with Dialect set ("sqlite" or
// "postgres"), sqlmailbox's queue Queue in the SQLite file or PostgreSQL
// database Target.
type childConfig struct {
	Endpoint, Region, QueueURL string
	DummyCredentials           bool
	Dialect, Target, Queue     string

	Lease, Hold time.Duration
	Concurrency int
	// ExitWhenEmpty makes the process say "waiting N" first (the queue's
	// messages: visible, in flight and delayed), and run beside the
	// consumer a loop that returns once the queue holds none twice in a
	// row, 100 ms apart, which ends the run.
	ExitWhenEmpty bool
	Poison        bool // run poisonChildMain instead (poison_e2e_test.go; SQS only)
}

// childMain is the child process's main: it opens the queue and runs a
// consumer of it (consumerProcess), or poisonChildMain's.
func childMain(raw string) int {
	var cfg childConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return childproc.Failed(fmt.Errorf("%s: %w", childEnv, err))
	}
	ctx := context.Background()
	mb, closeAll, err := cfg.open(ctx)
	if err != nil {
		return childproc.Failed(err)
	}
	defer closeAll()
	if cfg.Poison {
		sqs, ok := mb.(*sqsmailbox.Mailbox)
		if !ok {
			return childproc.Failed(fmt.Errorf("Poison runs on an SQS queue, not on %s", cfg.Dialect))
		}
		return poisonChildMain(cfg, sqs)
	}
	var group lifecycle.LoopGroup
	if cfg.ExitWhenEmpty {
		backlog := func(ctx context.Context) (int, error) {
			a, err := mb.(sqsloop.AttributesReader).QueueAttributes(ctx)
			return a.ApproximateMessages + a.ApproximateMessagesInFlight + a.ApproximateMessagesDelayed, err
		}
		n, err := backlog(ctx)
		if err != nil {
			return childproc.Failed(err)
		}
		childproc.Say("waiting %d", n)
		if err := group.Add("until-empty", lifecycle.RunnableFunc(func(ctx context.Context) error {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for empty := 0; empty < 2; {
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
				}
				if n, err := backlog(ctx); err == nil && n == 0 {
					empty++
				} else {
					empty = 0
				}
			}
			return nil
		})); err != nil {
			return childproc.Failed(err)
		}
	}
	return consumerProcess(&group, mb, consumer.Config{
		Concurrency:       cmp.Or(cfg.Concurrency, 2),
		VisibilityTimeout: cfg.Lease,
		Visibility:        visibility.Config{Interval: min(time.Second, cfg.Lease/4), Extension: cfg.Lease},
	}, cfg.Hold, 100*time.Millisecond)
}

// open opens the queue cfg names; closeAll closes its mailbox (and Store).
func (cfg childConfig) open(ctx context.Context) (mb sqsloop.Mailbox, closeAll func(), err error) {
	var st *sqlmailbox.Store
	switch cfg.Dialect {
	case "":
		client, err := sqsmailbox.NewClient(ctx, cfg.Endpoint, harness.ConfigOptions(cfg.Region, cfg.DummyCredentials)...)
		if err != nil {
			return nil, nil, err
		}
		mb, err := sqsmailbox.New(client, cfg.QueueURL)
		if err != nil {
			return nil, nil, err
		}
		return mb, func() { _ = mb.Close() }, nil
	case "sqlite":
		st, err = sqlite.Open(ctx, cfg.Target, sqlite.Options{})
	case "postgres":
		st, err = postgres.Open(ctx, cfg.Target, postgres.Options{})
	default:
		return nil, nil, fmt.Errorf("Dialect %q: want \"\" (SQS), \"sqlite\" or \"postgres\"", cfg.Dialect)
	}
	if err != nil {
		return nil, nil, err
	}
	q, err := st.Queue(ctx, cfg.Queue)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return q, func() { _ = q.Close(); _ = st.Close() }, nil
}

// consumerProcess adds to group a consumer of mb and runs the group (in its
// zero value SIGTERM and SIGINT drain). The consumer has cfg's Concurrency,
// VisibilityTimeout and Visibility, 20 s long polls (what users run), a
// 10 s drain, and logs warnings to standard error; its handler writes
// "start ID", beats every beat for hold, writes "done ID" and returns nil.
// On its way out it writes "exit " and the consumer's stats. It returns
// the process's exit code: 0 when the group stopped cleanly, 1 when it
// returned an error, 2 when it could not start (the error on standard
// error).
func consumerProcess(group *lifecycle.LoopGroup, mb sqsloop.Mailbox, cfg consumer.Config, hold, beat time.Duration) int {
	cfg.WaitTime = sqsloop.MaxWaitTime
	cfg.ShutdownTimeout = 10 * time.Second
	cfg.Logger = warnLogger()
	c, err := consumer.New(mb, func(ctx context.Context, m *sqsloop.Message) error {
		childproc.Say("start %s", m.ID)
		for end := time.Now().Add(hold); time.Now().Before(end); {
			heartbeat.Beat(ctx)
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(min(beat, time.Until(end))):
			}
		}
		childproc.Say("done %s", m.ID)
		return nil
	}, cfg)
	if err != nil {
		return childproc.Failed(err)
	}
	if err := group.Add("consumer", c); err != nil {
		return childproc.Failed(err)
	}
	err = group.Run(context.Background())
	childproc.Say("exit %+v", c.Stats())
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// warnLogger is a child's logger: warnings and errors, to standard error.
func warnLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// childOn returns the config of a child consumer process of q, on the shared
// server, with leases of lease and handlers that beat for hold.
func childOn(t *testing.T, q mailboxtest.Queue, lease, hold time.Duration) childConfig {
	t.Helper()
	srv := sqsServer(t)
	return childConfig{
		Endpoint: srv.Endpoint, Region: srv.Region, DummyCredentials: srv.staticCreds,
		QueueURL: q.Mailbox.(*sqsmailbox.Mailbox).QueueURL(),
		Lease:    lease, Hold: hold,
	}
}

// processQueue is a queue the test shares with the consumer processes it
// starts: mb is the test's mailbox of it, and child's fields that name a
// queue name it.
type processQueue struct {
	backend string // the subtest's name
	mb      sqsloop.Mailbox
	child   childConfig
}

// forEachProcessBackend runs body, as parallel subtests named after the
// backend, on a fresh queue with visibility timeout vis on each backend a
// consumer process can share with the test: the SQS server ("sqsmailbox";
// skipped or failed as sqsServerHarness says when there is none) and
// sqlmailbox's two databases (forEachSQLQueue). All on the wall clock: the
// processes are real.
func forEachProcessBackend(t *testing.T, vis time.Duration, body func(t *testing.T, q processQueue)) {
	t.Run("sqsmailbox", func(t *testing.T) {
		t.Parallel()
		h := sqsServerHarness(t)
		q, cleanup := h.NewQueue(t.Context(), t, mailboxtest.QueueOptions{VisibilityTimeout: vis})
		defer cleanup()
		body(t, processQueue{h.Name(), q.Mailbox, childOn(t, q, 0, 0)})
	})
	forEachSQLQueue(t, vis, body)
}

// forEachSQLQueue runs body, as parallel subtests "sqlmailbox/sqlite" and
// "sqlmailbox/postgres", on a queue "jobs" with visibility timeout vis in a
// SQLite file and in a fresh PostgreSQL database on PG_DSN's server
// (skipped, or failed under CI=true, without it).
func forEachSQLQueue(t *testing.T, vis time.Duration, body func(t *testing.T, q processQueue)) {
	run := func(t *testing.T, dialect, target string, open func() (*sqlmailbox.Store, error)) {
		st, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		mb, err := st.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: vis})
		if err != nil {
			t.Fatal(err)
		}
		defer mb.Close()
		body(t, processQueue{"sqlmailbox/" + dialect, mb, childConfig{Dialect: dialect, Target: target, Queue: "jobs"}})
	}
	t.Run("sqlmailbox/sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "jobs.db")
		run(t, "sqlite", path, func() (*sqlmailbox.Store, error) { return sqlite.Open(t.Context(), path, sqlite.Options{}) })
	})
	t.Run("sqlmailbox/postgres", func(t *testing.T) {
		t.Parallel()
		dsn := sqlharness.FreshDatabase(t)
		run(t, "postgres", dsn, func() (*sqlmailbox.Store, error) { return postgres.Open(t.Context(), dsn, postgres.Options{}) })
	})
}

// child is a running child process of this test binary.
type child struct{ *childproc.Child }

// startChild starts this test binary as a child process: env names the
// environment variable that selects its main (see TestMain), cfg is that
// main's config, sent in JSON. The end of the test kills it if it still
// runs.
func startChild(t *testing.T, env string, cfg any) child {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return child{childproc.Start(t, env+"="+string(raw))}
}

// awaitStarts reads the child's output until n handlers have started, and
// returns their message IDs; it fails t when they have not within d.
func (p child) awaitStarts(t *testing.T, n int, d time.Duration) []string {
	t.Helper()
	started, _ := p.await(t, n, 0, d)
	return started
}

// awaitDone reads the child's output until n handlers have finished, and
// returns the message IDs of the handlers that started and finished
// meanwhile; it fails t when they have not within d.
func (p child) awaitDone(t *testing.T, n int, d time.Duration) (started, done []string) {
	t.Helper()
	return p.await(t, 0, n, d)
}

// await reads the child's output until at least starts handlers have
// started and finished handlers have finished, and returns their IDs; it
// fails t when that has not happened within d.
func (p child) await(t *testing.T, starts, finished int, d time.Duration) (started, done []string) {
	t.Helper()
	for line := range p.Within(t, d) {
		if id, ok := strings.CutPrefix(line, "start "); ok {
			started = append(started, id)
		} else if id, ok := strings.CutPrefix(line, "done "); ok {
			done = append(done, id)
		}
		if len(started) >= starts && len(done) >= finished {
			return started, done
		}
	}
	t.Fatalf("the child ended after %d handlers started and %d finished, want %d and %d; stderr:\n%s",
		len(started), len(done), starts, finished, p.Stderr())
	return nil, nil
}

// rest reads the child's output to its end (it must end within d) and
// returns the IDs of the handlers that started and finished in it, the
// exit line, and Wait's result.
func (p child) rest(t *testing.T, d time.Duration) (started, done []string, exit string, err error) {
	t.Helper()
	for line := range p.Within(t, d) {
		if id, ok := strings.CutPrefix(line, "start "); ok {
			started = append(started, id)
		} else if id, ok := strings.CutPrefix(line, "done "); ok {
			done = append(done, id)
		} else if strings.HasPrefix(line, "exit ") {
			exit = line
		}
	}
	return started, done, exit, <-p.Exited
}
