package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/internal/harness"
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

// childMain is the child process's main. It writes "start ID" when a
// handler starts, "done ID" when it returns nil, and, on its way out,
// "exit " and the consumer's stats; it returns the exit code: 0 when the
// group drained cleanly, 1 otherwise (the error on standard error).
func childMain(raw string) int {
	var cfg childConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "child:", childEnv, err)
		return 2
	}
	ctx := context.Background()
	client, err := sqsmailbox.NewClient(ctx, cfg.Endpoint, harness.ConfigOptions(cfg.Region, cfg.DummyCredentials)...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	mb, err := sqsmailbox.New(client, cfg.QueueURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	defer mb.Close()
	var out sync.Mutex // one line per write
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	if cfg.Poison {
		return poisonChildMain(cfg, mb, say)
	}
	c, err := consumer.New(mb, func(ctx context.Context, m *sqsloop.Message) error {
		say("start %s", m.ID)
		for end := time.Now().Add(cfg.Hold); time.Now().Before(end); {
			heartbeat.Beat(ctx)
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(100 * time.Millisecond):
			}
		}
		say("done %s", m.ID)
		return nil
	}, consumer.Config{
		Concurrency:       2,
		VisibilityTimeout: cfg.Lease,
		WaitTime:          sqsloop.MaxWaitTime,
		Visibility:        visibility.Config{Interval: time.Second, Extension: cfg.Lease},
		ShutdownTimeout:   10 * time.Second,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	var group lifecycle.LoopGroup
	if err := group.Add("consumer", c); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	err = group.Run(ctx)
	say("exit %+v", c.Stats())
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// child is a running child consumer process.
type child struct {
	cmd    *exec.Cmd
	lines  chan string // its standard output, line by line; closed at its end
	exited chan error  // Wait's result, once its output has ended
	stderr *lockedBuffer
}

// startChild starts this test binary as a consumer process running cfg.
// The end of the test kills it if it still runs.
func startChild(t *testing.T, cfg childConfig) *child {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return startProcess(t, childEnv+"="+string(raw))
}

// startProcess starts this test binary with the environment variable env
// ("NAME=value") added, which makes it a child process (see TestMain). The
// end of the test kills it if it still runs.
func startProcess(t *testing.T, env string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$") // runs no test even if the variable were ignored
	cmd.Env = append(os.Environ(), env)
	p := &child{cmd: cmd, lines: make(chan string, 64), exited: make(chan error, 1), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.exited <- cmd.Wait() // after the output has been read to its end, as Wait wants
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // no-op once it has exited
		for range p.lines {
		}
	})
	return p
}

// awaitStarts reads the child's output until n handlers have started, and
// returns their message IDs; it fails t when they have not within d.
func (p *child) awaitStarts(t *testing.T, n int, d time.Duration) []string {
	t.Helper()
	var ids []string
	timeout := time.After(d)
	for len(ids) < n {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the child ended after starting %d handlers; stderr:\n%s", len(ids), p.stderr)
			}
			if id, ok := strings.CutPrefix(line, "start "); ok {
				ids = append(ids, id)
			}
		case <-timeout:
			t.Fatalf("the child started %d handlers within %v, want %d; stderr:\n%s", len(ids), d, n, p.stderr)
		}
	}
	return ids
}

// rest reads the child's output to its end (it must end within d) and
// returns the IDs of the handlers that started and finished in it, the exit
// line, and Wait's result.
func (p *child) rest(t *testing.T, d time.Duration) (started, done []string, exit string, err error) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return started, done, exit, <-p.exited
			}
			if id, ok := strings.CutPrefix(line, "start "); ok {
				started = append(started, id)
			} else if id, ok := strings.CutPrefix(line, "done "); ok {
				done = append(done, id)
			} else if strings.HasPrefix(line, "exit ") {
				exit = line
			}
		case <-timeout:
			t.Fatalf("the child still running %v later; stderr:\n%s", d, p.stderr)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use: os/exec writes the
// child's standard error from a goroutine of its own while a failing test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
