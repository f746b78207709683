// Package workertest starts an example program as a process of its own in
// its tests, to signal it and kill it: the program's test binary, started
// again with an environment variable that makes its TestMain run the
// program's main (Main) instead of the tests. Imported only by tests.
package workertest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/lifecycle"
)

// processEnv, set in the environment, makes Main run the program.
const processEnv = "SQSLOOP_WORKER_PROCESS"

// Main is a program's TestMain: in a process Start started it runs main
// (with the arguments Start gave) and exits 0 when main returns; otherwise
// it runs the tests.
func Main(m *testing.M, main func()) {
	if os.Getenv(processEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Files writes n files of 4 KiB, named prefix0 to prefix(n-1), to a
// temporary directory of t's and returns it: the jobs' -dir.
func Files(t testing.TB, n int, prefix string) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(prefix, i)), bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Start starts the program as a process of its own with args (after
// "-concurrency 8"), and returns once it has printed its first progress
// line: its LoopGroup then handles signals and its handlers are mid-job.
// wait reads the rest of its standard output and waits for it to exit; its
// standard error is logged. The end of the test kills it if it still runs.
func Start(t *testing.T, args ...string) (cmd *exec.Cmd, wait func() (stdout string, err error)) {
	t.Helper()
	cmd = exec.Command(os.Args[0], append([]string{"-concurrency", "8"}, args...)...)
	cmd.Env = append(os.Environ(), processEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
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
	r := bufio.NewReader(pipe)
	var out strings.Builder
	for {
		line, err := r.ReadString('\n')
		out.WriteString(line)
		if strings.HasPrefix(line, "[") {
			break
		}
		if err != nil {
			_ = cmd.Wait()
			t.Fatalf("the program ended before its first progress line: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
		}
	}
	return cmd, func() (string, error) {
		rest, _ := io.ReadAll(r)
		out.Write(rest)
		err := cmd.Wait()
		if stderr.Len() > 0 {
			t.Logf("the program's stderr:\n%s", stderr.String())
		}
		return out.String(), err
	}
}

// Serve runs run in the background, as a program runs its job with
// -metrics-addr 127.0.0.1:0 (run passes that to the job), and returns the
// base URL of its server ("http://127.0.0.1:PORT") once the run says it
// serves; it fails t if the run ends first or a minute passes. stop cancels
// the run's context (what SIGTERM does) and returns the run's error.
func Serve(t testing.TB, run func(ctx context.Context, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) error) (base string, stop func() error) {
	t.Helper()
	out := &lines{c: make(chan string, 1024)}
	group := &lifecycle.LoopGroup{Signals: []os.Signal{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- run(ctx, group, out, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	stop = func() error {
		cancel()
		return <-done
	}
	timeout := time.After(time.Minute)
	for {
		select {
		case line := <-out.c:
			if m := regexp.MustCompile(`^serving (http://\S+) `).FindStringSubmatch(line); m != nil {
				return m[1], stop
			}
		case err := <-done:
			t.Fatalf("the run ended before serving: %v", err)
		case <-timeout:
			t.Fatal("the run did not say it serves within a minute")
		}
	}
}

// lines is a run's output: it passes what the run prints to c, line by
// line (lines beyond c's buffer are dropped).
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
	c   chan string
}

func (w *lines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(p), nil
		}
		select {
		case w.c <- line:
		default:
		}
	}
}

// Fetch GETs url and returns its body, failing t unless the answer is 200.
func Fetch(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, body)
	}
	return string(body)
}
