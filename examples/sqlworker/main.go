// Command sqlworker is sqsloop's main job (examples/worker) on a database
// (package sqlmailbox): with -mailbox sqlite:jobs.db (or -mailbox
// postgres://…) the queue "jobs" and its dead-letter queue live there,
// created on first use, and the jobs of -dir are enqueued when the queue is
// empty. A run interrupted (Ctrl+C, or killed) leaves the rest in the
// database; the next run says how many it found waiting and finishes them.
//
// It is a program of its own so that the main job compiles no database
// driver; with -metrics-addr it serves the same probes and lease page.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// options are the program's flags.
type options struct {
	worker.Options
	mailbox string // sqlite:PATH or postgres://…
}

// run opens the queue in the database o names and runs the job on it:
// enqueueing the jobs when the queue is empty, else finishing those an
// earlier run left.
func (o options) run(ctx context.Context, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) (worker.Summary, error) {
	if o.mailbox == "" {
		return worker.Summary{}, errors.New("-mailbox: want sqlite:PATH or a postgres:// URL")
	}
	q, err := openSQL(ctx, o.mailbox)
	if err != nil {
		return worker.Summary{}, err
	}
	defer q.Close()
	state, err := jobstate.Open(ctx, o.mailbox) // the checkpoints and idempotency keys, in tables beside the queue's
	if err != nil {
		return worker.Summary{}, err
	}
	defer state.Close()
	c := worker.Config{Options: o.Options, Queue: q, Enqueue: true, State: state}
	if n := q.Waiting(); n > 0 {
		// An earlier run was interrupted: finish its jobs, enqueue none.
		c.Enqueue, c.Waiting = false, n
		fmt.Fprintf(out, "found %d jobs waiting in %s from an earlier run: finishing them\n", n, database(o.mailbox))
	}
	return worker.Run(ctx, c, group, out, log)
}

func main() {
	var o options
	o.Flags(flag.CommandLine)
	flag.StringVar(&o.mailbox, "mailbox", "", "the database the jobs live in: sqlite:PATH or a postgres:// URL (an interrupted run's jobs are finished by the next)")
	flag.Parse()
	worker.Main("sqlworker", o.run)
}
