package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// childEnv makes this test binary a child process of the tests here
// instead of running tests: "role path [argument]".
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
//   - lock: takes SQLite's exclusive lock on the file, writes "locked",
//     holds it for args[2] (a duration), then commits and writes "released".
//   - send: sends batches of 10 to the queue "jobs" and writes "sent ID" for
//     each message once Send has returned, until it is killed.
//   - ack: receives from "jobs" and writes "acked ID" for each message once
//     Delete has returned, until it is killed.
//   - consume: writes "ready", then receives from "jobs" (30 s leases),
//     writes "got ID" for each message, works on it for 1 ms, deletes it,
//     and exits once a 1 s long poll comes back empty after it got some.
func childMain(args []string) int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	var out sync.Mutex
	say := func(format string, a ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", a...)
	}
	role, path := args[0], args[1]
	if role == "lock" {
		hold, err := time.ParseDuration(args[2])
		if err != nil {
			return fail(err)
		}
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
		time.Sleep(hold) // the role is to hold the lock this long
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			return fail(err)
		}
		say("released")
		return 0
	}
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
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

// child is a running child process and its output, line by line.
type child struct {
	cmd    *exec.Cmd
	lines  chan string // closed at the end of its output
	done   chan error  // Wait's result, after the output ended
	stderr *strings.Builder
	mu     *sync.Mutex
}

// startChild starts this test binary in a role on the file path; the end of
// the test kills it if it still runs.
func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(args, " "))
	c := &child{cmd: cmd, lines: make(chan string, 1024), done: make(chan error, 1), stderr: &strings.Builder{}, mu: &sync.Mutex{}}
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.stderr.Write(p)
	})
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range c.lines {
		}
	})
	return c
}

// errors returns what the child wrote to standard error.
func (c *child) errors() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// expect reads lines until one equals want, failing t if the output ends
// or d passes first.
func (c *child) expect(t *testing.T, want string, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("child ended before %q; stderr:\n%s", want, c.errors())
			}
			if line == want {
				return
			}
		case <-timeout:
			t.Fatalf("no %q from the child within %v; stderr:\n%s", want, d, c.errors())
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
