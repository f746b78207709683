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

// Two loops under one LoopGroup, stopped by the coordinator's Trigger (as
// the first SIGTERM would after Install): readiness turns false, the
// Shutdowner drains, the plain loop has its context cancelled, Run returns
// nil, and the shutdown callback has run.
func Example() {
	coord, err := lifecycle.NewShutdownCoordinator(lifecycle.CoordinatorConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer coord.Stop()
	flushed := false
	coord.Register("flush metrics", func(ctx context.Context) error {
		flushed = true
		return nil
	})

	group, err := lifecycle.NewLoopGroup(lifecycle.GroupConfig{Coordinator: coord})
	if err != nil {
		fmt.Println(err)
		return
	}
	orders := newDrainer()
	ticks := make(chan struct{})
	_ = group.Add("orders", orders)
	_ = group.Add("reaper", lifecycle.RunnableFunc(func(ctx context.Context) error {
		close(ticks)
		<-ctx.Done()
		return ctx.Err() // context.Canceled after a stop request is clean
	}))

	triggered := make(chan struct{})
	go func() {
		defer close(triggered)
		<-orders.started
		<-ticks
		fmt.Println("ready before shutdown:", group.Ready() == nil)
		coord.Trigger()
		fmt.Println("ready after Trigger:", group.Ready())
	}()

	err = group.Run(context.Background())
	<-triggered
	fmt.Println("Run returned:", err)
	fmt.Println("cause:", context.Cause(coord.Context()))
	fmt.Println("callbacks:", coord.Wait(context.Background()), flushed)
	fmt.Println("live after Run:", group.Live())
	// Output:
	// ready before shutdown: true
	// ready after Trigger: lifecycle: shutdown begun
	// Run returned: <nil>
	// cause: lifecycle: shutdown requested
	// callbacks: <nil> true
	// live after Run: false
}
