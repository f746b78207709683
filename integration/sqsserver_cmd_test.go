package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cmd/sqsserver, the way scripts/test.sh runs it: it prints SQS_ENDPOINT and
// SQS_SERVER once fauxqs answers, and when its stdin closes, or on SIGTERM,
// it stops fauxqs (nothing listens at the endpoint any more) and exits 0.
func TestSQSServerCommandStartsAndStopsFauxqs(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("node_modules/fauxqs"); err != nil {
		t.Skip("fauxqs not installed (npm ci --prefix integration)")
	}
	if dockerAnswers(t.Context()) == nil {
		t.Skip("a Docker engine answers here, so sqsserver would start LocalStack")
	}
	bin := filepath.Join(t.TempDir(), "sqsserver")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/sqsserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var childEnv []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SQS_ENDPOINT=") && !strings.HasPrefix(kv, "SQS_SERVER=") {
			childEnv = append(childEnv, kv)
		}
	}

	for _, stop := range []string{"stdin closed", "SIGTERM"} {
		t.Run(strings.ReplaceAll(stop, " ", "_"), func(t *testing.T) {
			cmd := exec.Command(bin, "-dir", ".")
			cmd.Env = childEnv
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			lines := make(chan string, 2)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
				exited <- cmd.Wait() // after stdout is read to its end, as Wait wants
			}()
			defer func() {
				_ = cmd.Process.Kill() // no-op once it has exited
			}()

			got := map[string]string{}
			timeout := time.After(DefaultStartTimeout)
			for len(got) < 2 {
				select {
				case line, ok := <-lines:
					if !ok {
						t.Fatalf("sqsserver ended its output after %v; stderr:\n%s", got, stderr.String())
					}
					k, v, _ := strings.Cut(line, "=")
					got[k] = v
				case <-timeout:
					t.Fatalf("sqsserver printed %v within %v; stderr:\n%s", got, DefaultStartTimeout, stderr.String())
				}
			}
			u, err := url.Parse(got["SQS_ENDPOINT"])
			if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || got["SQS_SERVER"] != KindFauxqs {
				t.Fatalf("sqsserver printed %v, want SQS_ENDPOINT=http://127.0.0.1:PORT and SQS_SERVER=fauxqs", got)
			}
			s, err := StartSQSServer(t.Context(), ServerOptions{Getenv: env(map[string]string{"SQS_ENDPOINT": got["SQS_ENDPOINT"]})})
			if err != nil {
				t.Fatalf("the server sqsserver printed does not answer: %v", err)
			}
			_ = s.Close()

			if stop == "SIGTERM" {
				err = cmd.Process.Signal(syscall.SIGTERM)
			} else {
				err = stdin.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("sqsserver exited with %v after %s; stderr:\n%s", err, stop, stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("sqsserver still running 20 s after %s; stderr:\n%s", stop, stderr.String())
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
			if err == nil {
				conn.Close()
				t.Fatalf("something still listens at %s after sqsserver exited: fauxqs was not stopped", u.Host)
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Logf("dialing %s after sqsserver exited: %v", u.Host, err)
			}
		})
	}
}
