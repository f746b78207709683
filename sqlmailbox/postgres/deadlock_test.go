package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// contentionTime is how long TestNoDeadlocks drives each queue: 4 s in CI;
// SQSLOOP_DEADLOCK_SECONDS for longer runs.
func contentionTime(t *testing.T) time.Duration {
	if v := os.Getenv("SQSLOOP_DEADLOCK_SECONDS"); v != "" {
		var s int
		if _, err := fmt.Sscan(v, &s); err != nil || s < 1 {
			t.Fatalf("SQSLOOP_DEADLOCK_SECONDS=%q: want a positive number", v)
		}
		return time.Duration(s) * time.Second
	}
	return 4 * time.Second
}

// Every call that locks messages (receives, with and without moves to the
// dead-letter queue; batch acks; batch visibility changes; sweeps) runs
// against the others on a queue with a DLQ, standard and FIFO, from two
// Stores (two pools: what two processes are to the server), and none of
// them fails with a deadlock (SQLSTATE 40P01); the database's
// pg_stat_database.deadlocks stays 0 too. Receivers take batches of 10
// with 1 s leases and then, at random, ack them at once, extend some and
// ack the rest, nack some, or hold them past their lease before acking
// (the late ack of a message another receive is taking); a maxReceiveCount
// of 3 sends many to the DLQ, by receives and by sweeps. Before the locks
// were taken in one order the FIFO half failed at once (65 deadlocks in 6
// s: a receive holding its queue's row waited for a message a sweep held,
// and the sweep waited for the queue's row); the standard half's cycle,
// a receive against an ack, needs two races in one receive and shows in
// runs of minutes (benchmarks/cmd/pgfleet), not here.
func TestNoDeadlocks(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(map[bool]string{false: "standard", true: "FIFO"}[fifo], func(t *testing.T) {
			dsn := sqlharness.FreshDatabase(t)
			ctx := t.Context()
			stores := make([]*sqlmailbox.Store, 2)
			for i := range stores {
				st, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: 12})
				if err != nil {
					t.Fatal(err)
				}
				stores[i] = st
			}
			spec := sqsloop.QueueSpec{Name: sqlharness.QueueName(t), FIFO: fifo, ContentBasedDeduplication: fifo, MaxReceiveCount: 3}
			if fifo {
				spec.Name += sqsloop.FIFOSuffix
			}
			var mbs []*sqlmailbox.Mailbox
			for _, st := range stores {
				mb, err := st.CreateQueue(ctx, spec)
				if err != nil {
					t.Fatal(err)
				}
				mbs = append(mbs, mb)
			}
			before := deadlocks(t, dsn)
			var deadlocked, calls atomic.Int64
			var other sync.Map // the first error of each other kind
			note := func(err error) {
				calls.Add(1)
				var pe *pgconn.PgError
				switch {
				case errors.As(err, &pe) && pe.Code == "40P01":
					deadlocked.Add(1)
				case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
					other.LoadOrStore(fmt.Sprintf("%T", errors.Unwrap(err)), err)
				}
			}
			runCtx, stop := context.WithTimeout(ctx, contentionTime(t))
			defer stop()
			var wg sync.WaitGroup
			var sent atomic.Int64
			for p, mb := range mbs {
				wg.Go(func() { feed(runCtx, mb, fifo, p, &sent, note) })
				for w := range churners {
					wg.Go(func() { churn(runCtx, mb, rand.New(rand.NewPCG(uint64(p), uint64(w))), note) })
				}
				wg.Go(func() {
					for runCtx.Err() == nil {
						_, err := stores[p].Sweep(runCtx)
						note(err)
					}
				})
			}
			wg.Wait()
			for _, mb := range mbs {
				_ = mb.Close()
			}
			for _, st := range stores {
				_ = st.Close() // its connections end, reporting their statistics
			}
			after := deadlocks(t, dsn)
			t.Logf("%d messages sent, %d calls; %d failed with 40P01; pg_stat_database.deadlocks %d -> %d",
				sent.Load(), calls.Load(), deadlocked.Load(), before, after)
			other.Range(func(_, err any) bool {
				t.Errorf("a call failed: %v", err)
				return true
			})
			if deadlocked.Load() != 0 || after != before {
				t.Errorf("%d calls failed with 40P01 (deadlock detected), pg_stat_database.deadlocks went from %d to %d; want none",
					deadlocked.Load(), before, after)
			}
		})
	}
}

// churners is how many goroutines of each Store receive and settle.
const churners = 24

// feed keeps about 1,000 messages visible in mb's queue (on a FIFO queue in
// 20 groups) until ctx ends.
func feed(ctx context.Context, mb *sqlmailbox.Mailbox, fifo bool, p int, sent *atomic.Int64, note func(error)) {
	for n := 0; ctx.Err() == nil; {
		a, err := mb.QueueAttributes(ctx)
		if err != nil || a.ApproximateMessages > 1000 {
			note(err)
			_ = sqlharness.Sleep(ctx, 5*time.Millisecond)
			continue
		}
		batch := make([]sqsloop.OutgoingMessage, sqsloop.MaxBatchSize)
		for i := range batch {
			batch[i].Body = fmt.Sprintf("p%d-%d", p, n)
			if fifo {
				batch[i].MessageGroupID = fmt.Sprint("g", n%20)
			}
			n++
		}
		_, err = mb.Send(ctx, batch)
		note(err)
		if err == nil {
			sent.Add(sqsloop.MaxBatchSize)
		}
	}
}

// churn receives batches from mb and settles them at random, until ctx
// ends.
func churn(ctx context.Context, mb *sqlmailbox.Mailbox, r *rand.Rand, note func(error)) {
	for ctx.Err() == nil {
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Second, WaitTime: time.Second})
		note(err)
		if len(msgs) == 0 {
			continue
		}
		handles := make([]string, len(msgs))
		for i, m := range msgs {
			handles[i] = m.ReceiptHandle
		}
		r.Shuffle(len(handles), func(i, j int) { handles[i], handles[j] = handles[j], handles[i] })
		switch r.IntN(4) {
		case 0: // ack at once
		case 1: // extend some, ack all
			_, err = mb.ChangeVisibility(ctx, changes(handles[:r.IntN(len(handles))+1], 30*time.Second))
			note(err)
		case 2: // nack some, ack the rest
			k := r.IntN(len(handles)) + 1
			_, err = mb.ChangeVisibility(ctx, changes(handles[:k], 0))
			note(err)
			handles = handles[k:]
		case 3: // hold past the lease, then ack (late: others may be taking them)
			_ = sqlharness.Sleep(ctx, time.Duration(900+r.IntN(300))*time.Millisecond)
		}
		if len(handles) > 0 {
			_, err = mb.Delete(ctx, handles)
			note(err)
		}
	}
}

// FIFO sends of one deduplication ID in several orders at once, and the
// sweep forgetting expired IDs, never deadlock: a send claims its batch's
// IDs in key order, as the sweep locks them (before, a send claimed them in
// the batch's order, each locking the ID's row even when it was a
// duplicate, so two sends of one batch in two orders could each hold an ID
// the other waited for).
func TestFIFOSendsDoNotDeadlock(t *testing.T) {
	dsn := sqlharness.FreshDatabase(t)
	ctx := t.Context()
	st, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "sends.fifo", FIFO: true, ContentBasedDeduplication: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	var deadlocked, sent atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		r := rand.New(rand.NewPCG(uint64(w), 7))
		wg.Go(func() {
			for range 30 {
				batch := make([]sqsloop.OutgoingMessage, sqsloop.MaxBatchSize)
				for i, k := range r.Perm(len(batch)) {
					batch[i] = sqsloop.OutgoingMessage{Body: fmt.Sprint("same-", k), MessageGroupID: "g"}
				}
				_, err := mb.Send(ctx, batch)
				var pe *pgconn.PgError
				switch {
				case errors.As(err, &pe) && pe.Code == "40P01":
					deadlocked.Add(1)
				case err != nil:
					t.Errorf("Send: %v", err)
					return
				default:
					sent.Add(1)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d batches sent, %d failed with 40P01", sent.Load(), deadlocked.Load())
	if deadlocked.Load() != 0 {
		t.Errorf("%d sends failed with 40P01 (deadlock detected), want none", deadlocked.Load())
	}
	a, err := mb.QueueAttributes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.ApproximateMessages != sqsloop.MaxBatchSize {
		t.Errorf("%d messages stored, want the 10 bodies once each", a.ApproximateMessages)
	}
}

func changes(handles []string, timeout time.Duration) []sqsloop.VisibilityChange {
	cs := make([]sqsloop.VisibilityChange, len(handles))
	for i, h := range handles {
		cs[i] = sqsloop.VisibilityChange{ReceiptHandle: h, Timeout: timeout}
	}
	return cs
}

// deadlocks returns pg_stat_database.deadlocks of the database dsn names,
// once the statistics of the connections that ended are in.
func deadlocks(t *testing.T, dsn string) int64 {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, `SELECT pg_stat_clear_snapshot(), deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(nil, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
