package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// childEnv makes this test binary a child process of the tests here
// instead of running tests: "role path".
const childEnv = "SQSLOOP_SQLITE_CHILD"

// TestMain runs the tests and checks that no goroutine outlived them;
// started with childEnv set, the binary is a child process instead.
func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childMain(strings.Fields(spec)))
	}
	goleak.VerifyTestMain(m)
}

// childMain runs one role on the database file args[1], writing a line to
// standard output for every step the parent waits on:
//
//   - lock: takes SQLite's exclusive lock on the file, writes "locked", and
//     holds it until it is killed (the parent's word: the lock goes with
//     the process).
//   - send: sends batches of 10 to the queue "jobs" and writes "sent ID" for
//     each message once Send has returned, until it is killed.
//   - ack: receives from "jobs" and writes "acked ID" for each message once
//     Delete has returned, until it is killed.
//   - consume: writes "ready", then receives from "jobs" (30 s leases),
//     writes "got ID" for each message, works on it for 1 ms, deletes it,
//     and exits once a 1 s long poll comes back empty after it got some.
//   - poll: BenchmarkSweepBacklog's other process (pollRole).
func childMain(args []string) int {
	ctx := context.Background()
	fail, say := childproc.Failed, childproc.Say
	role, path := args[0], args[1]
	if role == "poll" {
		return pollRole(path)
	}
	if role == "lock" {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			return fail(err)
		}
		defer db.Close()
		conn, err := db.Conn(ctx)
		if err != nil {
			return fail(err)
		}
		if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
			return fail(err)
		}
		say("locked")
		select {} // until killed
	}
	var opts sqlite.Options
	if role == "consume" {
		// Two consumers and a sender take turns on the lock, commit by
		// commit, each commit an fsync: on a loaded machine one can lose
		// the race for the lock for longer than the default 10 s (SQLite's
		// lock is not fair). TestTwoProcessesShareOneFile is about sharing,
		// not waiting (TestLockedFileWaitsWithinBusyTimeout is).
		opts.BusyTimeout = shareBusyTimeout
	}
	st, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		return fail(err)
	}
	switch role {
	case "send":
		for n := 0; ; n++ {
			batch := make([]sqsloop.OutgoingMessage, sqsloop.MaxBatchSize)
			for i := range batch {
				batch[i] = sqsloop.OutgoingMessage{Body: fmt.Sprint("m", n, "-", i)}
			}
			res, err := mb.Send(ctx, batch)
			if err != nil {
				return fail(err)
			}
			for _, r := range res {
				if r.Err != nil {
					return fail(r.Err)
				}
				say("sent %s", r.MessageID)
			}
		}
	case "ack", "consume":
		lease := time.Hour
		if role == "consume" {
			lease = 30 * time.Second
			say("ready")
		}
		got := 0
		for {
			msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: lease, WaitTime: time.Second})
			if err != nil {
				return fail(err)
			}
			if len(msgs) == 0 && role == "consume" && got > 0 {
				return 0
			}
			got += len(msgs)
			handles := make([]string, len(msgs))
			for i, m := range msgs {
				handles[i] = m.ReceiptHandle
				if role == "consume" {
					say("got %s", m.ID)
					time.Sleep(time.Millisecond) // the role's work
				}
			}
			if len(msgs) == 0 {
				continue
			}
			errs, err := mb.Delete(ctx, handles)
			if err != nil {
				return fail(err)
			}
			for i, e := range errs {
				if e != nil {
					return fail(e)
				}
				if role == "ack" {
					say("acked %s", msgs[i].ID)
				}
			}
		}
	}
	return fail(fmt.Errorf("unknown role %q", role))
}

// startChild starts this test binary in a role on the file path
// (childMain); the end of the test kills it if it still runs.
func startChild(t *testing.T, args ...string) *childproc.Child {
	t.Helper()
	return childproc.Start(t, childEnv+"="+strings.Join(args, " "))
}
