package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sqsloop/sqsloop/benchmarks/pgdb"
	"golang.org/x/sync/errgroup"
)

// The bare loops: no framework, one SQL statement per step, b.concurrency
// goroutines on one pgx pool at its defaults (as sqlmailbox's and River's).
// They are not queues anyone should run; they are what the pattern costs
// on this server, the floor under every queue built on it.
const (
	// The DELETE loop takes and finishes 10 jobs in one statement: the
	// floor for a queue on SELECT … FOR UPDATE SKIP LOCKED. A job is gone
	// once taken: if its worker died, it would be lost (at most once).
	bareSchema = `CREATE TABLE bare_jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text NOT NULL)`
	bareFill   = `INSERT INTO bare_jobs (body) SELECT 'job ' || g FROM generate_series(1, $1::integer) g`
	bareTake   = `DELETE FROM bare_jobs WHERE id IN (SELECT id FROM bare_jobs ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 10) RETURNING id, body`

	// The lease loop is the least a queue that leases does (at least
	// once, as SQS, River and sqlmailbox), and what pgmq's read and delete
	// do: one statement takes 10 jobs by moving their visibility deadline
	// (an index on it finds the visible ones) and counting the receive,
	// one more deletes them by id when they are done. (It deletes what a
	// lapsed lease's new holder holds: a receipt handle, as sqlmailbox's,
	// would cost a receive count in the DELETE's condition.)
	leaseSchema = `CREATE TABLE lease_jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text NOT NULL,
		visible_at timestamptz NOT NULL DEFAULT statement_timestamp(), receive_count integer NOT NULL DEFAULT 0);
		CREATE INDEX lease_jobs_visible ON lease_jobs (visible_at, id)`
	leaseFill = `INSERT INTO lease_jobs (body) SELECT 'job ' || g FROM generate_series(1, $1::integer) g`
	leaseTake = `UPDATE lease_jobs j SET visible_at = statement_timestamp() + interval '30 seconds', receive_count = j.receive_count + 1
		FROM (SELECT id FROM lease_jobs WHERE visible_at <= statement_timestamp() ORDER BY visible_at, id LIMIT 10 FOR UPDATE SKIP LOCKED) p
		WHERE j.id = p.id RETURNING j.id, j.receive_count, j.body`
	leaseAck = `DELETE FROM lease_jobs WHERE id = ANY($1::bigint[])`
)

// bareLoop is one of the bare loops: its table, how it is filled, and one
// step of a worker, which returns how many jobs it finished.
type bareLoop struct {
	name, schema, fill string
	step               func(ctx context.Context, pool *pgxpool.Pool) (int, error)
}

var (
	deleteLoop = bareLoop{name: "bare DELETE loop", schema: bareSchema, fill: bareFill,
		step: func(ctx context.Context, pool *pgxpool.Pool) (int, error) {
			rows, err := pool.Query(ctx, bareTake)
			if err != nil {
				return 0, err
			}
			var id int64
			var body string
			n, err := pgx.ForEachRow(rows, []any{&id, &body}, func() error { return nil })
			return int(n.RowsAffected()), err
		}}
	leaseLoop = bareLoop{name: "bare lease loop", schema: leaseSchema, fill: leaseFill,
		step: func(ctx context.Context, pool *pgxpool.Pool) (int, error) {
			rows, err := pool.Query(ctx, leaseTake)
			if err != nil {
				return 0, err
			}
			var ids []int64
			var id int64
			var count int32
			var body string
			if _, err := pgx.ForEachRow(rows, []any{&id, &count, &body}, func() error {
				ids = append(ids, id)
				return nil
			}); err != nil || len(ids) == 0 {
				return 0, err
			}
			tag, err := pool.Exec(ctx, leaseAck, ids)
			return int(tag.RowsAffected()), err
		}}
)

// runBare fills a fresh database's table with n jobs and times l's
// workers until they find it empty.
func (b bench) runBare(ctx context.Context, l bareLoop, n int) (result, error) {
	progress("%s: filling %d", l.name, n)
	db, drop, err := pgdb.Fresh(ctx, b.dsn, "riverbench_")
	if err != nil {
		return result{}, err
	}
	defer drop()
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		return result{}, err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, l.schema); err != nil {
		return result{}, err
	}
	if _, err := pool.Exec(ctx, l.fill, n); err != nil {
		return result{}, err
	}
	if err := b.ready(ctx, db); err != nil {
		return result{}, err
	}
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	m := b.meter()
	for range b.concurrency {
		g.Go(func() error {
			for {
				k, err := l.step(gctx, pool)
				if err != nil || k == 0 {
					return err // empty: the others take what they locked
				}
				done.Add(int64(k))
			}
		})
	}
	err = g.Wait()
	wall, server, client := m.stop()
	if err != nil {
		return result{}, err
	}
	if got := done.Load(); got != int64(n) {
		return result{}, fmt.Errorf("%s: %d of %d jobs done", l.name, got, n)
	}
	stmts, err := b.statements.read(ctx, db, 8)
	if err != nil {
		return result{}, err
	}
	progress("%s: %d jobs in %v (%.0f/s)", l.name, n, wall.Round(time.Millisecond), float64(n)/wall.Seconds())
	return result{impl: l.name, n: n, wall: wall, server: server, client: client, stmts: stmts}, nil
}
