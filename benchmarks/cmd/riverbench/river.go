package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/sqsloop/sqsloop/benchmarks/pgdb"
)

// jobArgs is the job River runs: work (bench.work) and nothing else.
type jobArgs struct{}

func (jobArgs) Kind() string { return "bench" }

type worker struct {
	river.WorkerDefaults[jobArgs]
	work time.Duration
}

func (w *worker) Work(ctx context.Context, _ *river.Job[jobArgs]) error { return work(ctx, w.work) }

// riverClient is a River client on a fresh database (db, its DSN) with n
// jobs inserted, not started.
type riverClient struct {
	client *river.Client[pgx.Tx]
	db     string
	events <-chan *river.Event
	close  func()
}

// newRiver migrates a fresh database, inserts n jobs (InsertManyFast: COPY),
// readies the database (bench.ready: ANALYZE) and returns a client with
// MaxWorkers b.concurrency; cooldown 0 keeps River's FetchCooldown default
// (100 ms).
func (b bench) newRiver(ctx context.Context, n int, cooldown time.Duration) (*riverClient, error) {
	db, drop, err := pgdb.Fresh(ctx, b.dsn, "riverbench_")
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		drop()
		return nil, err
	}
	fail := func(err error) (*riverClient, error) {
		pool.Close()
		drop()
		return nil, err
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fail(err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fail(err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker{work: b.work})
	cfg := &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: b.concurrency}},
		Workers: workers,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if cooldown > 0 {
		cfg.FetchCooldown = cooldown
	}
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return fail(err)
	}
	// Insert unconstrained by the client: COPY in chunks of 10,000.
	for i := 0; i < n; i += 10000 {
		params := make([]river.InsertManyParams, min(10000, n-i))
		for j := range params {
			params[j] = river.InsertManyParams{Args: jobArgs{}}
		}
		if _, err := client.InsertManyFast(ctx, params); err != nil {
			return fail(err)
		}
	}
	if err := b.ready(ctx, db); err != nil {
		return fail(err)
	}
	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{ChanSize: n + 1000, Kinds: []river.EventKind{river.EventKindJobCompleted}})
	return &riverClient{client: client, db: db, events: events, close: func() { cancel(); pool.Close(); drop() }}, nil
}

// runUntil starts the client and waits for want completions.
func (r *riverClient) runUntil(ctx context.Context, want int) error {
	if err := r.client.Start(ctx); err != nil {
		return err
	}
	timeout := time.After(30 * time.Minute)
	for done := 0; done < want; done++ {
		select {
		case <-r.events:
		case <-timeout:
			return fmt.Errorf("river: %d of %d jobs completed in 30 minutes", done, want)
		}
	}
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return r.client.Stop(stopCtx)
}

// runRiver times River until n jobs are completed.
func (b bench) runRiver(ctx context.Context, n int, cooldown time.Duration) (result, error) {
	name := riverName(cooldown)
	progress("%s: inserting %d", name, n)
	r, err := b.newRiver(ctx, n, cooldown)
	if err != nil {
		return result{}, err
	}
	defer r.close()
	m := b.meter()
	err = r.runUntil(ctx, n)
	wall, server, client := m.stop()
	if err != nil {
		return result{}, err
	}
	stmts, err := b.statements.read(ctx, r.db, 8)
	if err != nil {
		return result{}, err
	}
	progress("%s: %d jobs in %v (%.0f/s)", name, n, wall.Round(time.Millisecond), float64(n)/wall.Seconds())
	return result{impl: name, n: n, wall: wall, server: server, client: client, stmts: stmts}, nil
}
