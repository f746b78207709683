package checkpoint_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// A job of many steps saves its place after each: a delivery after a crash
// or a lost lease starts at the step after the last one saved.
func Example() {
	b := new(memmailbox.Broker)
	defer b.Close()
	queue, _ := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	_, _ = queue.Send(context.Background(), []sqsloop.OutgoingMessage{{Body: "render 5 frames"}})

	cp, err := checkpoint.New(&jobstate.Memory{}, checkpoint.Config{Queue: "jobs"}) // on a fleet: dynamostore, pgstate
	if err != nil {
		panic(err)
	}
	done := make(chan struct{})
	handler := func(ctx context.Context, m *sqsloop.Message) error {
		var frame int
		if _, err := checkpoint.LoadJSON(ctx, &frame); err != nil { // 0 and false on a first delivery
			return err
		}
		for ; frame < 5; frame++ {
			fmt.Println("frame", frame+1)
			if err := checkpoint.SaveJSON(ctx, frame+1); err != nil { // saved, and a heartbeat
				return err
			}
		}
		close(done)
		return nil // acked: the checkpoint is replaced by a mark of the job done
	}
	c, err := consumer.New(queue, handler, consumer.Config{
		WaitTime:   time.Second,
		Middleware: []sqsloop.Middleware{cp.Middleware},
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	go func() { <-done; stop() }()
	if err := c.Run(ctx); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", cp.Stats())
	// Output:
	// frame 1
	// frame 2
	// frame 3
	// frame 4
	// frame 5
	// {Saved:5 Resumed:0 Done:1 Permanent:0 MarkErrors:0 Finished:0}
}
