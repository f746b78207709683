package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
	"github.com/sqsloop/sqsloop/visibility"
)

// sqlChildEnv names the environment variable that makes this test binary a
// consumer process on sqlmailbox (sqlChildMain); its value is the child's
// sqlChildConfig, in JSON.
const sqlChildEnv = "SQSLOOP_E2E_SQLCHILD"

// sqlChildConfig is what a consumer process on sqlmailbox runs: a consumer
// of Queue in the SQLite file or PostgreSQL database Target, Concurrency
// handlers, 20 s long polls, leases of Lease extended every Lease/4, a 10 s
// drain, in the zero lifecycle.LoopGroup (SIGTERM drains). Its handler
// beats every 20 ms for Hold and returns nil. With ExitWhenEmpty the group
// also runs a loop that returns once the queue holds nothing (visible, in
// flight or delayed) twice in a row, 100 ms apart, which ends the run.
type sqlChildConfig struct {
	Dialect       string // "sqlite" or "postgres"
	Target        string // file path or DSN
	Queue         string
	Lease, Hold   time.Duration
	Concurrency   int
	ExitWhenEmpty bool
}

// sqlChildMain is the child's main: it writes "waiting N" with the queue's
// messages when it starts, then runs the consumer (consumerProcess).
func sqlChildMain(raw string) int {
	var cfg sqlChildConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return childproc.Failed(fmt.Errorf("%s: %w", sqlChildEnv, err))
	}
	ctx := context.Background()
	var st *sqlmailbox.Store
	var err error
	if cfg.Dialect == "sqlite" {
		st, err = sqlite.Open(ctx, cfg.Target, sqlite.Options{})
	} else {
		st, err = postgres.Open(ctx, cfg.Target, postgres.Options{})
	}
	if err != nil {
		return childproc.Failed(err)
	}
	defer st.Close()
	mb, err := st.Queue(ctx, cfg.Queue)
	if err != nil {
		return childproc.Failed(err)
	}
	defer mb.Close()
	backlog := func(ctx context.Context) (int, error) {
		a, err := mb.QueueAttributes(ctx)
		return a.ApproximateMessages + a.ApproximateMessagesInFlight + a.ApproximateMessagesDelayed, err
	}
	n, err := backlog(ctx)
	if err != nil {
		return childproc.Failed(err)
	}
	childproc.Say("waiting %d", n)
	var group lifecycle.LoopGroup
	if cfg.ExitWhenEmpty {
		if err := group.Add("until-empty", lifecycle.RunnableFunc(func(ctx context.Context) error {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for empty := 0; empty < 2; {
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
				}
				if n, err := backlog(ctx); err == nil && n == 0 {
					empty++
				} else {
					empty = 0
				}
			}
			return nil
		})); err != nil {
			return childproc.Failed(err)
		}
	}
	return consumerProcess(&group, mb, consumer.Config{
		Concurrency:       cfg.Concurrency,
		VisibilityTimeout: cfg.Lease,
		Visibility:        visibility.Config{Interval: cfg.Lease / 4, Extension: cfg.Lease},
	}, cfg.Hold, 20*time.Millisecond)
}
