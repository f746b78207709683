//go:build unix

package lifecycle

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// The real thing, outside synctest (os/signal cannot be used in a bubble):
// SIGTERM sent to the test process drains the group, SIGINT during the
// drain calls Exit with 130, and Run returns once the drain is done.
func TestRealSignals(t *testing.T) {
	release := make(chan struct{})
	d := &gatedLoop{started: make(chan struct{}), stopping: make(chan struct{}), release: release}
	codes := make(chan int, 2)
	g := &LoopGroup{Exit: func(code int) { codes <- code }}
	if err := g.Add("d", d); err != nil {
		t.Fatal(err)
	}
	res := runAsync(context.Background(), g)
	<-d.started // Run installs the handler before it starts the loops

	kill(t, syscall.SIGTERM)
	select {
	case <-d.stopping:
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not begin the drain within 10 s")
	}
	if g.Ready() == nil {
		t.Error("ready while draining")
	}
	kill(t, syscall.SIGINT)
	select {
	case code := <-codes:
		if code != 130 {
			t.Errorf("exit code %d, want 130", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT during the drain did not call Exit within 10 s")
	}
	close(release)
	if err := <-res; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

func kill(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatalf("kill %v: %v", sig, err)
	}
}

// gatedLoop is a Shutdowner whose drain lasts until release is closed.
type gatedLoop struct {
	started, stopping, release chan struct{}
}

func (g *gatedLoop) Run(ctx context.Context) error {
	close(g.started)
	<-g.stopping
	<-g.release
	return nil
}

func (g *gatedLoop) Shutdown(ctx context.Context) error {
	close(g.stopping)
	return nil
}
