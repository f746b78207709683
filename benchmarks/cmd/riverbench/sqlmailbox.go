package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/benchmarks/pgdb"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// dlqReceives is the maxReceiveCount of the queue with a dead-letter
// queue (-only dlq): River's default of 25 attempts; dlqSuffix names its
// runs.
const (
	dlqReceives = 25
	dlqSuffix   = " with DLQ"
)

// result is one run of the table.
type result struct {
	impl                         string
	n                            int
	round                        int
	load                         float64 // the machine's load average (1 minute) as the run began
	wall, server, client         time.Duration
	recv50, recv99, del50, del99 time.Duration // sqlmailbox only
	stmts                        []statement   // with pg_stat_statements
}

// openStore opens a Store of its own on dialect: a fresh database on dsn's
// server, or a SQLite file in a temporary directory; where is its DSN or
// path.
func openStore(ctx context.Context, dsn, dialect string) (st *sqlmailbox.Store, where string, closeAll func(), err error) {
	if dialect == "sqlite" {
		dir, err := os.MkdirTemp("", "riverbench-")
		if err != nil {
			return nil, "", nil, err
		}
		where = filepath.Join(dir, "jobs.db")
		st, err := sqlite.Open(ctx, where, sqlite.Options{})
		if err != nil {
			os.RemoveAll(dir)
			return nil, "", nil, err
		}
		return st, where, func() { st.Close(); os.RemoveAll(dir) }, nil
	}
	where, drop, err := pgdb.Fresh(ctx, dsn, "riverbench_")
	if err != nil {
		return nil, "", nil, err
	}
	pool, err := pgxpool.New(ctx, where)
	if err == nil {
		_, err = postgres.Migrate(ctx, pool)
		pool.Close()
	}
	if err == nil {
		st, err = postgres.Open(ctx, where, postgres.Options{})
	}
	if err != nil {
		drop()
		return nil, "", nil, err
	}
	return st, where, func() { st.Close(); drop() }, nil
}

// enqueue sends n messages from 8 goroutines in batches of 10.
func enqueue(ctx context.Context, mb sqsloop.Mailbox, n int) error {
	var g errgroup.Group
	next := make(chan int)
	go func() {
		defer close(next)
		for i := 0; i < n; i += sqsloop.MaxBatchSize {
			next <- i
		}
	}()
	for range 8 {
		g.Go(func() error {
			var err error
			for i := range next {
				if err != nil {
					continue
				}
				batch := make([]sqsloop.OutgoingMessage, 0, sqsloop.MaxBatchSize)
				for j := i; j < min(i+sqsloop.MaxBatchSize, n); j++ {
					batch = append(batch, sqsloop.OutgoingMessage{Body: fmt.Sprint("job ", j)})
				}
				var res []sqsloop.SendResult
				if res, err = mb.Send(ctx, batch); err == nil {
					for _, r := range res {
						if r.Err != nil {
							err = r.Err
						}
					}
				}
			}
			return err
		})
	}
	return g.Wait()
}

// timed records the latency of a Mailbox's Receive calls that returned
// messages and of its Delete calls.
type timed struct {
	sqsloop.Mailbox
	mu            sync.Mutex
	recv, deletes []time.Duration
}

func (m *timed) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	start := time.Now()
	msgs, err := m.Mailbox.Receive(ctx, req)
	if len(msgs) > 0 {
		m.mu.Lock()
		m.recv = append(m.recv, time.Since(start))
		m.mu.Unlock()
	}
	return msgs, err
}

func (m *timed) Delete(ctx context.Context, handles []string) ([]error, error) {
	start := time.Now()
	errs, err := m.Mailbox.Delete(ctx, handles)
	m.mu.Lock()
	m.deletes = append(m.deletes, time.Since(start))
	m.mu.Unlock()
	return errs, err
}

// percentile returns the p-th percentile (0–100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

// consume runs the consumer (b.concurrency handlers, each job b.work) on
// mb until want messages are acked.
func (b bench) consume(ctx context.Context, mb sqsloop.Mailbox, want int) error {
	c, err := consumer.New(mb, func(ctx context.Context, _ *sqsloop.Message) error { return work(ctx, b.work) }, consumer.Config{
		Concurrency:       b.concurrency,
		VisibilityTimeout: 30 * time.Second,
		WaitTime:          time.Second,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for c.Stats().Acked < int64(want) {
		select {
		case err := <-done:
			return fmt.Errorf("the consumer stopped: %v", err)
		case <-tick.C:
		}
	}
	stop()
	return <-done
}

// loop runs b.concurrency goroutines that receive batches of 10 from mb
// and delete them at once, with no consumer, until a receive finds
// nothing: the Mailbox's own cost, the consumer's left out.
func (b bench) loop(ctx context.Context, mb sqsloop.Mailbox, want int) error {
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range b.concurrency {
		g.Go(func() error {
			for {
				msgs, err := mb.Receive(gctx, sqsloop.ReceiveRequest{MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: 30 * time.Second})
				if err != nil || len(msgs) == 0 {
					return err
				}
				handles := make([]string, len(msgs))
				for i, m := range msgs {
					handles[i] = m.ReceiptHandle
				}
				errs, err := mb.Delete(gctx, handles)
				if err = errors.Join(append(errs, err)...); err != nil {
					return err
				}
				done.Add(int64(len(msgs)))
			}
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if got := done.Load(); got != int64(want) {
		return fmt.Errorf("the loop acked %d of %d", got, want)
	}
	return nil
}

// runSQLMailbox enqueues n messages on dialect and times the consumer until
// all are acked: on a queue with a dead-letter queue (maxReceiveCount 25,
// River's attempts) when dlq is set. With profile set it writes there a CPU
// profile of the timed part alone (not the enqueue).
func (b bench) runSQLMailbox(ctx context.Context, dialect string, n int, profile string, bare, dlq bool) (result, error) {
	st, where, closeAll, err := openStore(ctx, b.dsn, dialect)
	if err != nil {
		return result{}, err
	}
	defer closeAll()
	spec := sqsloop.QueueSpec{Name: "jobs"}
	impl := "sqlmailbox/" + dialect
	if dlq {
		spec.MaxReceiveCount = dlqReceives
		impl += dlqSuffix
	}
	mb, err := st.CreateQueue(ctx, spec)
	if err != nil {
		return result{}, err
	}
	progress("%s: enqueueing %d", impl, n)
	if err := enqueue(ctx, mb, n); err != nil {
		return result{}, err
	}
	if dialect == "postgres" {
		if err := b.ready(ctx, where); err != nil {
			return result{}, err
		}
	}
	tm := &timed{Mailbox: mb}
	stopProfile := startProfile(profile)
	m := b.meter()
	if bare {
		impl += " loop"
		err = b.loop(ctx, tm, n)
	} else {
		err = b.consume(ctx, tm, n)
	}
	wall, server, client := m.stop()
	stopProfile()
	if err != nil {
		return result{}, err
	}
	r := result{impl: impl, n: n, wall: wall, server: server, client: client,
		recv50: percentile(tm.recv, 50), recv99: percentile(tm.recv, 99), del50: percentile(tm.deletes, 50), del99: percentile(tm.deletes, 99)}
	if dialect == "sqlite" {
		r.server = 0 // in this process: counted in client
	} else if r.stmts, err = b.statements.read(ctx, where, 8); err != nil {
		return result{}, err
	}
	progress("%s: %d jobs in %v (%.0f/s)", impl, n, wall.Round(time.Millisecond), float64(n)/wall.Seconds())
	return r, nil
}
