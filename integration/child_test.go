package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/sqsmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// childEnv names the environment variable that makes this test binary a
// consumer process (childMain) instead of running tests; its value is the
// child's childConfig, in JSON.
const childEnv = "SQSLOOP_E2E_CHILD"

// childConfig is what a child consumer process runs: a consumer of QueueURL
// on the server at Endpoint, 2 handlers, 20 s long polls (what users run),
// leases of Lease extended by Lease every second, a 10 s drain, in the zero
// lifecycle.LoopGroup (SIGTERM and SIGINT drain). Its handler beats every
// 100 ms for Hold and returns nil.
type childConfig struct {
	Endpoint, Region, QueueURL string
	DummyCredentials           bool
	Lease, Hold                time.Duration
	Poison                     bool // run poisonChildMain instead (poison_e2e_test.go)
}

// childMain is the child process's main: a consumer of the queue
// (consumerProcess), or poisonChildMain's.
func childMain(raw string) int {
	var cfg childConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return childproc.Failed(fmt.Errorf("%s: %w", childEnv, err))
	}
	ctx := context.Background()
	client, err := sqsmailbox.NewClient(ctx, cfg.Endpoint, harness.ConfigOptions(cfg.Region, cfg.DummyCredentials)...)
	if err != nil {
		return childproc.Failed(err)
	}
	mb, err := sqsmailbox.New(client, cfg.QueueURL)
	if err != nil {
		return childproc.Failed(err)
	}
	defer mb.Close()
	if cfg.Poison {
		return poisonChildMain(cfg, mb)
	}
	return consumerProcess(&lifecycle.LoopGroup{}, mb, consumer.Config{
		Concurrency:       2,
		VisibilityTimeout: cfg.Lease,
		Visibility:        visibility.Config{Interval: time.Second, Extension: cfg.Lease},
	}, cfg.Hold, 100*time.Millisecond)
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
			case <-time.After(beat):
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
	var ids []string
	for line := range p.Within(t, d) {
		if id, ok := strings.CutPrefix(line, "start "); ok {
			if ids = append(ids, id); len(ids) == n {
				return ids
			}
		}
	}
	t.Fatalf("the child ended after starting %d handlers, want %d; stderr:\n%s", len(ids), n, p.Stderr())
	return nil
}

// rest reads the child's output to its end (it must end within d) and
// returns the IDs of the handlers that started and finished in it, the exit
// line, and Wait's result.
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
