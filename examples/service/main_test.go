//go:build unix

package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	_ "github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// processEnv, set, makes the test binary run the service instead of the
// tests.
const processEnv = "SQSLOOP_SERVICE_PROCESS"

func TestMain(m *testing.M) {
	if os.Getenv(processEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// service is the service running as a process of its own.
type service struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT
	rest chan string
}

// start starts the service with args and returns once it serves.
func start(t *testing.T, args ...string) *service {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), processEnv+"=1")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	serving := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)
	r := bufio.NewReader(pipe)
	for {
		line, err := r.ReadString('\n')
		if m := serving.FindStringSubmatch(line); m != nil {
			s := &service{cmd: cmd, base: m[1], rest: make(chan string, 1)}
			go func() { b, _ := io.ReadAll(r); s.rest <- string(b) }()
			return s
		}
		if err != nil {
			t.Fatalf("the service ended before it served: %v", err)
		}
	}
}

// metric returns the value of the first sample of name in /metrics (-1:
// none).
func (s *service) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + name + `\{[^}]*\} (\S+)$`).FindStringSubmatch(string(body))
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// stop sends SIGTERM and waits for the drain (exit status 0); it returns
// the jobs the process ran, as its last line says.
func (s *service) stop(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest := <-s.rest
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("the service after SIGTERM: %v, want exit 0 after its drain\n%s", err, rest)
	}
	m := regexp.MustCompile(`stopped: \{Ran:(\d+) `).FindStringSubmatch(rest)
	if m == nil {
		t.Fatalf("the service's last line lacks its counts:\n%s", rest)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// waitFor polls cond every 20 ms, for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// The service of the example, on SQLite, across a SIGTERM restart: 500
// jobs, each run once (the idempotency runs of the two processes add up
// to 500), none lost (the queue and its dead-letter queue end empty); it
// serves its metrics, probes and lease page while it runs.
func TestServiceAcrossASIGTERMRestart(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlmailbox.Open(t.Context(), "sqlite:"+filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, err := st.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	depth := func() (backlog, dead int) {
		a, err := q.QueueAttributes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		d, err := st.Queue(context.Background(), "jobs-dlq")
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		da, err := d.QueueAttributes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return a.ApproximateMessages + a.ApproximateMessagesInFlight + a.ApproximateMessagesDelayed, da.ApproximateMessages
	}
	args := []string{"-queue", "sqlite:" + filepath.Join(dir, "jobs.db") + "?queue=jobs", "-state", "sqlite:" + filepath.Join(dir, "state.db")}

	first := start(t, args...)
	for _, path := range []string{"/livez", "/readyz", "/debug/sqsloop"} {
		resp, err := http.Get(first.base + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %v, %v; want 200", path, resp, err)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
	waitFor(t, "100 jobs run", func() bool { return first.metric(t, "sqsloop_idempotency_runs_total") >= 100 })
	if first.metric(t, "sqsloop_consumers_recommended") < 1 || first.metric(t, "sqsloop_queue_backlog") < 0 {
		t.Error("/metrics lacks the live queue signals")
	}
	ran := first.stop(t)
	if backlog, _ := depth(); backlog == 0 {
		t.Fatal("the first run finished every job before its SIGTERM: nothing to restart")
	}

	second := start(t, append(args, "-send", "0")...)
	waitFor(t, "the queue to drain", func() bool { backlog, _ := depth(); return backlog == 0 })
	ranAgain := second.stop(t)
	t.Logf("the first run ran %d jobs, the second %d", ran, ranAgain)
	if ran+ranAgain != 500 {
		t.Errorf("%d + %d runs, want 500: every job once", ran, ranAgain)
	}
	if backlog, dead := depth(); backlog != 0 || dead != 0 {
		t.Errorf("%d jobs left in the queue, %d in its dead-letter queue; want none", backlog, dead)
	}
}
