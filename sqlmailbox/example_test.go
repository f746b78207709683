package sqlmailbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// The consumer on a SQLite queue, with its failures recorded in the audit
// table by a middleware and a Sweeper in the same LoopGroup.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "jobs.db"), sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	jobs, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	jobs.Send(ctx, []sqsloop.OutgoingMessage{{Body: "ok"}, {Body: "bad"}})

	audit := func(next sqsloop.Handler) sqsloop.Handler {
		return func(ctx context.Context, m *sqsloop.Message) error {
			err := next(ctx, m)
			if err != nil {
				_ = jobs.RecordFailure(context.WithoutCancel(ctx), m, err.Error())
			}
			return err
		}
	}
	done := make(chan struct{}, 2)
	c, err := consumer.New(jobs, func(ctx context.Context, m *sqsloop.Message) error {
		done <- struct{}{}
		if m.Body == "bad" {
			return fmt.Errorf("cannot do %q", m.Body)
		}
		return nil
	}, consumer.Config{VisibilityTimeout: 30 * time.Second, WaitTime: time.Second, Middleware: []sqsloop.Middleware{audit}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var group lifecycle.LoopGroup
	group.Add("jobs", c)
	group.Add("sweeper", st.Sweeper(time.Minute, nil))
	runCtx, stop := context.WithCancel(ctx)
	go func() { <-done; <-done; stop() }()
	if err := group.Run(runCtx); err != nil {
		fmt.Println(err)
	}
	recs, _ := st.Audit(ctx, "jobs", 10)
	for _, r := range recs {
		fmt.Println(r.Kind == sqlmailbox.AuditFailure, r.ReceiveCount, r.Reason)
	}
	// Output:
	// true 1 cannot do "bad"
}
