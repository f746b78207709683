package lifecycle_test

import (
	"context"
	"fmt"

	"github.com/sqsloop/sqsloop/lifecycle"
)

// drainer stands in for a consumer: Shutdown stops intake and waits for its
// in-flight work, in the style of net/http.Server.Shutdown.
type drainer struct {
	started, stopping, stopped chan struct{}
}

func newDrainer() *drainer {
	return &drainer{started: make(chan struct{}), stopping: make(chan struct{}), stopped: make(chan struct{})}
}

func (d *drainer) Run(ctx context.Context) error {
	defer close(d.stopped)
	close(d.started)
	select {
	case <-d.stopping: // drained: finish in-flight work, then return nil
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *drainer) Shutdown(ctx context.Context) error {
	close(d.stopping)
	select {
	case <-d.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Two loops under one LoopGroup, stopped by the end of Run's context (the
// first SIGTERM or SIGINT does the same): readiness turns false, the
// Shutdowner drains, the plain loop has its context cancelled, and Run
// returns nil once both have stopped.
func Example() {
	var group lifecycle.LoopGroup // SIGTERM/SIGINT begin shutdown; a second one exits
	orders := newDrainer()
	ticking := make(chan struct{})
	_ = group.Add("orders", orders)
	_ = group.Add("reaper", lifecycle.RunnableFunc(func(ctx context.Context) error {
		close(ticking)
		<-ctx.Done()
		fmt.Println("reaper stopped:", context.Cause(ctx))
		return ctx.Err() // context.Canceled after a stop request is clean
	}))

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-orders.started
		<-ticking
		fmt.Println("ready:", group.Ready())
		cancel()
	}()

	err := group.Run(ctx)
	fmt.Println("Run returned:", err)
	fmt.Println("ready after Run:", group.Ready())
	// Output:
	// ready: <nil>
	// reaper stopped: lifecycle: shutting down: Run's context ended (context canceled)
	// Run returned: <nil>
	// ready after Run: lifecycle: group not running
}
