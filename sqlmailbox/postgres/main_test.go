package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// childEnv makes this test binary a receiving process of the overlap test
// instead of running tests: "DSN queue goroutines".
const childEnv = "SQSLOOP_POSTGRES_CHILD"

// TestMain runs the tests and checks that no goroutine outlived them;
// started with childEnv set, the binary is a receiving process instead.
func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(receiverMain(strings.Fields(spec)))
	}
	goleak.VerifyTestMain(m)
}

// receiverMain runs args[2] goroutines that receive batches of 10 from the
// queue args[1] of the database args[0] with 10-minute leases and delete
// them at once, until a 1 s long poll comes back empty. For each message it
// received (whether or not its delete entry succeeded) it writes "ID body
// start received end": the receive's start and return and the delete's
// return, in Unix nanoseconds of this machine's clock, which the parent
// shares.
func receiverMain(args []string) int {
	ctx := context.Background()
	n, err := strconv.Atoi(args[2])
	if err != nil {
		return childproc.Failed(err)
	}
	st, err := postgres.Open(ctx, args[0], postgres.Options{MaxConns: int32(n + 2)})
	if err != nil {
		return childproc.Failed(err)
	}
	defer st.Close()
	mb, err := st.Queue(ctx, args[1])
	if err != nil {
		return childproc.Failed(err)
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := make(chan error, n)
	for range n {
		wg.Go(func() {
			for {
				start := time.Now()
				msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: 10 * time.Minute, WaitTime: time.Second})
				received := time.Now()
				if err != nil {
					failed <- err
					return
				}
				if len(msgs) == 0 {
					return
				}
				handles := make([]string, len(msgs))
				for i, m := range msgs {
					handles[i] = m.ReceiptHandle
				}
				_, err = mb.Delete(ctx, handles) // an entry fails for a FIFO message received again since
				if err != nil {
					failed <- err
					return
				}
				end := time.Now()
				mu.Lock()
				for _, m := range msgs {
					fmt.Fprintf(out, "%s %s %d %d %d\n", m.ID, m.Body, start.UnixNano(), received.UnixNano(), end.UnixNano())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	_ = out.Flush()
	select {
	case err := <-failed:
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	default:
		return 0
	}
}

// startReceivers starts this test binary as a receiving process
// (receiverMain); the end of the test kills it if it still runs. wait
// returns its lines once it has exited.
func startReceivers(t *testing.T, dsn, queue string, goroutines int) (wait func() ([]string, error)) {
	t.Helper()
	c := childproc.Start(t, fmt.Sprintf("%s=%s %s %d", childEnv, dsn, queue, goroutines))
	return func() ([]string, error) {
		lines, err := c.Rest(t, 5*time.Minute)
		if err != nil {
			return lines, fmt.Errorf("%w; stderr:\n%s", err, c.Stderr())
		}
		return lines, nil
	}
}
