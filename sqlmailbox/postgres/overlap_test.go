package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// overlapMessages is how many messages TestReceiversNeverShareAMessage
// sends: 5,000 in CI; SQSLOOP_OVERLAP_MESSAGES=50000 for the figure the
// README reports.
func overlapMessages(t *testing.T) int {
	if v := os.Getenv("SQSLOOP_OVERLAP_MESSAGES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SQSLOOP_OVERLAP_MESSAGES=%q: want a positive number", v)
		}
		return n
	}
	return 5000
}

// Many receivers never hold one message at once: 2 processes of 8
// goroutines each receive batches of 10 from one queue (FOR UPDATE SKIP
// LOCKED under the hood) with 10-minute leases and delete them at once. Each
// records, per message, from the start of the receive to the return of the
// delete; two such intervals of one message that intersect are an overlap.
// With leases that outlast the test, any second delivery is a failure too.
func TestReceiversNeverShareAMessage(t *testing.T) {
	h := sqlharness.NewPostgres(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{})
	defer cleanup()
	n := overlapMessages(t)
	sendConcurrently(ctx, t, q.Mailbox, n)

	start := time.Now()
	runs := receiveInProcesses(t, q.Mailbox)
	elapsed := time.Since(start)
	overlaps, duplicates := 0, 0
	perProc := make([]int, receivingProcesses)
	for _, iv := range runs {
		perProc[iv[0].proc]++
		if len(iv) > 1 {
			duplicates++
		}
		sort.Slice(iv, func(i, j int) bool { return iv[i].start < iv[j].start })
		for i := 1; i < len(iv); i++ {
			if iv[i].start < iv[i-1].end {
				overlaps++
			}
		}
	}
	t.Logf("%d messages, %d receivers (%d processes × %d goroutines), drained in %v (%.0f messages/s): "+
		"%d overlaps, %d delivered more than once, %d never; per process %v",
		n, receivingProcesses*receivingGoroutines, receivingProcesses, receivingGoroutines, elapsed.Round(time.Millisecond),
		float64(n)/elapsed.Seconds(), overlaps, duplicates, n-len(runs), perProc)
	if overlaps != 0 || duplicates != 0 || len(runs) != n {
		t.Errorf("%d overlaps, %d duplicates, %d of %d messages delivered; want 0, 0, all", overlaps, duplicates, len(runs), n)
	}
	for p, c := range perProc {
		if c == 0 {
			t.Errorf("process %d received nothing: the receivers did not compete", p)
		}
	}
	mailboxtest.ExpectNone(ctx, t, q.Mailbox, time.Second)
}

// Many receivers keep a FIFO queue's groups in order: 2 processes of 8
// goroutines each receive batches of 10 from a FIFO queue of 1,000 messages
// in 20 groups (its receives take turns on the queue's row lock) with
// 10-minute leases and delete them at once. Every message is delivered once,
// and each group's in the order sent: a message is taken only once the one
// before it in its group was deleted, so its receive returns after that
// one's did (or with it, in one batch).
func TestFIFOReceiversKeepEachGroupInOrder(t *testing.T) {
	h := sqlharness.NewPostgres(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{FIFO: true})
	defer cleanup()
	const n, groups = 1000, 20
	var out []sqsloop.OutgoingMessage
	for j := range n {
		body := fmt.Sprintf("g%02d-%03d", j%groups, j/groups)
		out = append(out, sqsloop.OutgoingMessage{Body: body, MessageGroupID: body[:3], DeduplicationID: body})
	}
	mailboxtest.SendAll(ctx, t, q.Mailbox, out...)

	start := time.Now()
	runs := receiveInProcesses(t, q.Mailbox)
	elapsed := time.Since(start)
	duplicates, misordered := 0, 0
	byGroup := map[string][]delivery{}
	for _, d := range runs {
		if len(d) > 1 {
			duplicates++
		}
		byGroup[d[0].body[:3]] = append(byGroup[d[0].body[:3]], d...)
	}
	for g, ds := range byGroup {
		sort.Slice(ds, func(i, j int) bool {
			return ds[i].received < ds[j].received || ds[i].received == ds[j].received && ds[i].body < ds[j].body
		})
		for i := 1; i < len(ds); i++ {
			if ds[i].body <= ds[i-1].body {
				misordered++
				if misordered <= 5 {
					t.Errorf("group %s: %s arrived after %s", g, ds[i].body, ds[i-1].body)
				}
			}
		}
	}
	t.Logf("%d FIFO messages in %d groups, %d receivers (%d processes × %d goroutines), drained in %v (%.0f messages/s): "+
		"%d delivered more than once, %d out of order, %d never",
		n, groups, receivingProcesses*receivingGoroutines, receivingProcesses, receivingGoroutines, elapsed.Round(time.Millisecond),
		float64(n)/elapsed.Seconds(), duplicates, misordered, n-len(runs))
	if duplicates != 0 || misordered != 0 || len(runs) != n {
		t.Errorf("%d duplicates, %d out of order, %d of %d messages delivered; want 0, 0, all", duplicates, misordered, len(runs), n)
	}
	mailboxtest.ExpectNone(ctx, t, q.Mailbox, time.Second)
}

// How many processes, of how many goroutines each, receiveInProcesses
// starts.
const receivingProcesses, receivingGoroutines = 2, 8

// delivery is one receive of a message, as a receiving process reported it
// (receiverMain): the receive's start and return and the delete's return, in
// Unix nanoseconds.
type delivery struct {
	proc                 int
	body                 string
	start, received, end int64
}

// receiveInProcesses drains mb's queue with receivingProcesses processes
// (receiverMain) and returns their deliveries by message ID.
func receiveInProcesses(t *testing.T, mb sqsloop.Mailbox) map[string][]delivery {
	t.Helper()
	var waits []func() ([]string, error)
	for range receivingProcesses {
		waits = append(waits, startReceivers(t, sqlharness.PGDSN(t), mb.(interface{ Name() string }).Name(), receivingGoroutines))
	}
	runs := map[string][]delivery{}
	for p, wait := range waits {
		lines, err := wait()
		if err != nil {
			t.Fatalf("receiving process %d: %v", p, err)
		}
		for _, line := range lines {
			f := strings.Fields(line)
			d := delivery{proc: p, body: f[1]}
			d.start, _ = strconv.ParseInt(f[2], 10, 64)
			d.received, _ = strconv.ParseInt(f[3], 10, 64)
			d.end, _ = strconv.ParseInt(f[4], 10, 64)
			runs[f[0]] = append(runs[f[0]], d)
		}
	}
	return runs
}

// sendConcurrently sends n messages through mb from 8 goroutines, in
// batches of 10.
func sendConcurrently(ctx context.Context, t *testing.T, mb sqsloop.Mailbox, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := 0; i < n; i += sqsloop.MaxBatchSize {
			next <- i
		}
	}()
	for range 8 {
		wg.Go(func() {
			for i := range next {
				batch := make([]sqsloop.OutgoingMessage, 0, sqsloop.MaxBatchSize)
				for j := i; j < min(i+sqsloop.MaxBatchSize, n); j++ {
					batch = append(batch, sqsloop.OutgoingMessage{Body: fmt.Sprint("m", j)})
				}
				res, err := mb.Send(ctx, batch)
				if err == nil {
					for _, r := range res {
						err = r.Err
						if err != nil {
							break
						}
					}
				}
				if err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("Send: %v", err)
	}
}
