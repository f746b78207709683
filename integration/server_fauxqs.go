package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// FauxqsVersion is the fauxqs release pinned in integration/package.json
// (with a Node.js 22 from the npm package "node", since fauxqs needs
// Node.js >= 22.5).
const FauxqsVersion = "2.4.1"

// errNotInstalled marks a fauxqs that is not installed, as opposed to one
// that failed to start.
var errNotInstalled = errors.New("fauxqs not installed")

var listeningLine = regexp.MustCompile(`fauxqs listening on (http://127\.0\.0\.1:\d+)`)

// startFauxqs runs `node fauxqs.mjs` from dir with the Node.js that
// `npm ci --prefix integration` installed, and waits until it listens and
// answers. The server's Close stops the process (SIGTERM, then kill after
// 5 s) and waits for it.
func startFauxqs(ctx context.Context, dir string) (*SQSServer, error) {
	if dir == "" {
		dir = "."
	}
	// The node binary runs with dir as its working directory: its path must
	// not be relative to dir a second time.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("fauxqs directory: %w", err)
	}
	node := filepath.Join(dir, "node_modules", "node", "bin", "node")
	for _, need := range []string{node, filepath.Join(dir, "node_modules", "fauxqs", "package.json"), filepath.Join(dir, "fauxqs.mjs")} {
		if _, err := os.Stat(need); err != nil {
			return nil, fmt.Errorf("%w: %s missing (run `npm ci --prefix integration` from the repository root): %w", errNotInstalled, need, err)
		}
	}

	out := &startupLog{ready: make(chan string, 1)}
	cmd := exec.Command(node, "--disable-warning=ExperimentalWarning", "fauxqs.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FAUXQS_PORT=0")
	cmd.Stdout = out
	cmd.Stderr = out
	// fauxqs.mjs exits when its stdin closes: if this process dies without
	// calling Close, the kernel closes the pipe and the emulator goes too.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("fauxqs stdin pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", node, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var stopOnce sync.Once
	var stopErr error
	stop := func() error {
		stopOnce.Do(func() {
			_ = stdin.Close()
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				stopErr = errors.New("fauxqs did not exit within 5 s of SIGTERM; killed")
				<-exited
			}
		})
		return stopErr
	}

	var endpoint string
	select {
	case endpoint = <-out.ready:
	case err := <-exited:
		exited <- err // let stop's receive succeed
		_ = stop()
		return nil, fmt.Errorf("fauxqs exited before listening (%v): %s", err, out.tail())
	case <-ctx.Done():
		_ = stop()
		return nil, fmt.Errorf("fauxqs did not listen in time: %w: %s", ctx.Err(), out.tail())
	}
	s := &SQSServer{Kind: KindFauxqs, Endpoint: endpoint, Region: "us-east-1", staticCreds: true, stop: stop}
	if err := s.waitReady(ctx); err != nil {
		_ = stop()
		return nil, fmt.Errorf("fauxqs at %s does not answer: %w: %s", endpoint, err, out.tail())
	}
	return s, nil
}

// startupLog collects a child's output: it reports the listening address
// once, and keeps the last 4 KiB for error messages. Safe for concurrent use
// (os/exec may write stdout and stderr from two goroutines).
type startupLog struct {
	mu    sync.Mutex
	buf   []byte
	sent  bool
	ready chan string
}

func (l *startupLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if !l.sent {
		if m := listeningLine.FindSubmatch(l.buf); m != nil {
			l.sent = true
			l.ready <- string(m[1])
		}
	}
	if len(l.buf) > 4096 && l.sent {
		l.buf = append(l.buf[:0], l.buf[len(l.buf)-4096:]...)
	}
	return len(p), nil
}

func (l *startupLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(bytes.TrimSpace(l.buf))
}

var _ io.Writer = (*startupLog)(nil)
