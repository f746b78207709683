package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
)

// The end-to-end tests run sqsloop as users do: a process of its own (this
// test binary, started again with beMainEnv set, runs main), on a queue of
// the real SQS server SQS_ENDPOINT names, in a SQLite file, and in the
// PostgreSQL PG_DSN names.

// beMainEnv makes this test binary run sqsloop's main instead of the tests.
const beMainEnv = "BE_SQSLOOP_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// processTimeout bounds every sqsloop process a test starts: far more than
// any of them takes, so that a hang fails the test instead of the run.
const processTimeout = 2 * time.Minute

// backend is a place queues live, with the flags naming one.
type backend struct {
	name string
	env  []string // the process's environment beyond this one's
	// create creates a queue of its own for t with a dead-letter queue
	// after maxReceiveCount receives, and returns the flags naming the
	// queue and those naming its dead-letter queue.
	create func(t testing.TB, maxReceiveCount int) (queue, dlq []string)
	// redrive is the flags redrive needs on this backend.
	redrive []string
	// countsExpiredAsInFlight declares a fauxqs bug: a message whose
	// visibility timeout has ended counts as in flight
	// (ApproximateNumberOfMessagesNotVisible), not visible, until the
	// queue's next receive (fauxqs 2.4.1 updates its in-flight map on
	// receives and long polls only, never on GetQueueAttributes).
	countsExpiredAsInFlight bool
}

// forEachBackend runs test on every backend, in parallel subtests; a
// backend whose server is not at hand skips, saying how to get it.
func forEachBackend(t *testing.T, test func(t *testing.T, b *backend)) {
	t.Parallel()
	for _, name := range []string{"sqs", "sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newBackend(t, name))
		})
	}
}

func newBackend(t testing.TB, name string) *backend {
	t.Helper()
	b := &backend{name: name}
	switch name {
	case "sqs":
		env, err := harness.ReadEnv(os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		if env.Endpoint == "" {
			const how = "SQS_ENDPOINT is unset, so there is no SQS server to run sqsloop on.\n" +
				"*** ./scripts/test.sh starts one; or run `(cd integration && npm ci --no-audit --no-fund && go run ./cmd/sqsserver -dir .)`\n" +
				"*** and export the SQS_ENDPOINT and SQS_SERVER it prints."
			if os.Getenv("CI") == "true" {
				t.Fatal(how + " CI=true: a skipped test would hide that nothing was tested.")
			}
			t.Skip("\n*** SKIPPING: " + how + " (CI=true makes this a failure.)")
		}
		b.env = []string{"AWS_REGION=" + env.Region}
		if env.DummyCredentials {
			b.env = append(b.env, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=")
		}
		if env.Kind == harness.Fauxqs {
			b.redrive = []string{"--loop"} // fauxqs has no StartMessageMoveTask
			b.countsExpiredAsInFlight = true
		}
		b.create = func(t testing.TB, maxReceiveCount int) ([]string, []string) {
			name := queueNameFor(t)
			url := strings.TrimSpace(b.run(t, "", "create-queue", "--endpoint", env.Endpoint, "--queue", name,
				"--max-receive-count", itoa(maxReceiveCount)))
			return []string{"--endpoint", env.Endpoint, "--queue-url", url},
				[]string{"--endpoint", env.Endpoint, "--queue-url", url + "-dlq"}
		}
	case "sqlite":
		path := "sqlite:" + filepath.Join(t.TempDir(), "queues.db")
		b.create = func(t testing.TB, maxReceiveCount int) ([]string, []string) {
			name := queueNameFor(t)
			b.run(t, "", "create-queue", "--mailbox", path, "--queue", name, "--max-receive-count", itoa(maxReceiveCount))
			return []string{"--mailbox", path, "--queue", name}, []string{"--mailbox", path, "--queue", name + "-dlq"}
		}
	case "postgres":
		dsn := sqlharness.EmptyDatabase(t) // skips without PG_DSN, saying how to get one
		b.run(t, "", "migrate", "--mailbox", dsn)
		b.create = func(t testing.TB, maxReceiveCount int) ([]string, []string) {
			name := queueNameFor(t)
			b.run(t, "", "create-queue", "--mailbox", dsn, "--queue", name, "--max-receive-count", itoa(maxReceiveCount))
			return []string{"--mailbox", dsn, "--queue", name}, []string{"--mailbox", dsn, "--queue", name + "-dlq"}
		}
	}
	return b
}

// queueNameFor is a queue name of t's own: SQS allows 80 letters, digits, -
// and _.
func queueNameFor(t testing.TB) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	base := strings.Map(func(c rune) rune {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			return c
		}
		return '-'
	}, t.Name())
	if len(base) > 60 {
		base = base[len(base)-60:]
	}
	return strings.Trim(base, "-") + "-" + hex.EncodeToString(r[:])
}

func itoa(n int) string { return strconv.Itoa(n) }

// proc is a running sqsloop process.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr harness.Buffer
	done           chan struct{}
	err            error
}

// start starts sqsloop with args and stdin, stopped (SIGKILL) when t ends
// if it still runs.
func (b *backend) start(t testing.TB, stdin string, args ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{done: make(chan struct{})}
	p.cmd = exec.Command(exe, args...)
	p.cmd.Env = append(cleanEnv(), beMainEnv+"=1")
	p.cmd.Env = append(p.cmd.Env, b.env...)
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Logf("sqsloop %s was still running; killed. Its stderr:\n%s", args[0], p.stderr.String())
		}
	})
	return p
}

// cleanEnv is this process's environment without sqsloop's settings.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPrefix) {
			env = append(env, kv)
		}
	}
	return env
}

// wait waits for the process to exit, at most processTimeout, and returns
// its error (nil for exit status 0).
func (p *proc) wait(t testing.TB) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(processTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("sqsloop %s still running after %v; killed. Its stderr:\n%s", p.cmd.Args[1], processTimeout, p.stderr.String())
		return nil
	}
}

// signal sends the process sig.
func (p *proc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// run runs sqsloop with args and stdin to its end and returns its standard
// output, failing t when it fails.
func (b *backend) run(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	p := b.start(t, stdin, args...)
	if err := p.wait(t); err != nil {
		t.Fatalf("sqsloop %s: %v; stderr:\n%s", strings.Join(args, " "), err, p.stderr.String())
	}
	return p.stdout.String()
}

// exitCode is the exit status of err, a process's Wait error; 0 for nil.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// counts are a queue's and its dead-letter queue's message counts, from
// `sqsloop stats --json`.
type counts struct {
	Visible, InFlight, Delayed, DeadLettered int
}

func (b *backend) counts(t *testing.T, queue []string) counts {
	t.Helper()
	var s struct {
		Queue queueStats  `json:"queue"`
		DLQ   *queueStats `json:"dead_letter_queue"`
	}
	out := b.run(t, "", append([]string{"stats", "--json"}, queue...)...)
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("stats --json: %v in:\n%s", err, out)
	}
	if s.DLQ == nil {
		t.Fatalf("stats --json: no dead_letter_queue in:\n%s", out)
	}
	return counts{Visible: s.Queue.Visible, InFlight: s.Queue.InFlight, Delayed: s.Queue.Delayed, DeadLettered: s.DLQ.Visible}
}

// lines returns the lines of the file path ("" for a missing file: none).
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// waitFor polls cond until it holds, failing t after processTimeout: for a
// state another process reaches (a file it writes), which no event tells
// this one about.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited %v for %s", processTimeout, what)
		case <-tick.C:
		}
	}
}
