package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The worker's probes answer through its drain, on the wire: the worker
// binary (in memory, 8 handlers of 3 s jobs, -metrics-addr) is sent
// SIGTERM mid-job; while its handlers finish, GET /livez answers 200 (an
// orchestrator must not kill a process finishing its work), /readyz 503
// (nor send it more), and the lease page 200; the worker then exits 0 and
// the port is closed. (Before, the probes were served by a loop of the group
// that stopped the moment shutdown began: connection refused.)
func TestE2EWorkerProbesAnswerThroughTheDrain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(buildExample(t, "worker"), "-dir", dir, "-concurrency", "8", "-slow", "100ms", "-chunks", "30", "-progress", "0",
		"-metrics-addr", "127.0.0.1:0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan time.Time, 1)
	var out bytes.Buffer
	var waitErr error
	lines := make(chan string, 64)
	go func() {
		r := bufio.NewReader(pipe)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				lines <- line
			}
			if err != nil {
				break
			}
		}
		close(lines)
	}()
	var base string
	for base == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the worker ended before serving:\n%s", stderr.String())
			}
			out.WriteString(line)
			if m := regexp.MustCompile(`^serving (http://\S+) `).FindStringSubmatch(line); m != nil {
				base = m[1]
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Fatal("no serving line in a minute")
		}
	}
	go func() {
		for line := range lines {
			out.WriteString(line)
		}
		waitErr = cmd.Wait()
		exited <- time.Now()
	}()
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (int, string) {
		resp, err := client.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if c, _ := get("/readyz"); c == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz never answered 200")
		}
	}
	time.Sleep(500 * time.Millisecond) // mid-job: the 3 s jobs run
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Readiness turns false at once; the handlers take seconds to finish.
	var ready int
	var readyBody string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ready, readyBody = get("/readyz"); ready != 200 || time.Now().After(deadline) {
			break
		}
	}
	live, liveBody := get("/livez")
	page, _ := get("/debug/sqsloop")
	probed := time.Now()
	var end time.Time
	select {
	case end = <-exited:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		end = <-exited
		t.Fatal("the worker has not exited a minute after SIGTERM")
	}
	t.Logf("during the drain: /readyz %d %q, /livez %d %q, /debug/sqsloop %d; the worker exited %v after the probes",
		ready, readyBody, live, liveBody, page, end.Sub(probed).Round(time.Millisecond))
	if ready != 503 || !strings.Contains(readyBody, "shutting down") || live != 200 || page != 200 {
		t.Errorf("during the drain: /readyz %d %q, /livez %d, /debug/sqsloop %d; want 503 shutting down, 200, 200", ready, readyBody, live, page)
	}
	if !end.After(probed) {
		t.Errorf("the worker had exited before the probes: they were not made during the drain")
	}
	if waitErr != nil {
		t.Errorf("worker: %v, want exit 0 after its drain\nstdout:\n%s\nstderr:\n%s", waitErr, out.String(), stderr.String())
	}
	if c, _ := get("/livez"); c != 0 {
		t.Errorf("GET /livez after the worker exited = %d, want no answer", c)
	}
}
