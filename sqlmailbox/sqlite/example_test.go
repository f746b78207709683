package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// A durable queue in a file: messages survive the process, and a second
// Open of the same file finds them.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobs.db")

	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	jobs, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3}) // and jobs-dlq
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := jobs.Send(ctx, []sqsloop.OutgoingMessage{{Body: "hash README.md"}}); err != nil {
		fmt.Println(err)
		return
	}
	st.Close() // the process could die here: the message is in the file

	st, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	jobs, err = st.Queue(ctx, "jobs")
	if err != nil {
		fmt.Println(err)
		return
	}
	msgs, err := jobs.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute, WaitTime: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(msgs[0].Body, msgs[0].ReceiveCount)
	attrs, _ := jobs.QueueAttributes(ctx)
	fmt.Println("in flight:", attrs.ApproximateMessagesInFlight, "dead-letter queue:", attrs.DeadLetterQueue)
	// Output:
	// hash README.md 1
	// in flight: 1 dead-letter queue: jobs-dlq
}
