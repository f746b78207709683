package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop/benchmarks/cputime"
)

// bench is what every run of one invocation shares.
type bench struct {
	dsn         string        // the PostgreSQL server
	concurrency int           // handlers (River: MaxWorkers; the bare loops: goroutines)
	work        time.Duration // each job's handler time (work)
	// postmaster is the PID of the server's postmaster when it runs on
	// this machine (findPostmaster), else 0: its CPU is then not measured.
	postmaster int
	// statements reads pg_stat_statements when the server loads it, else
	// it is nil (statements.go).
	statements *statements
}

// ready brings the database db (a DSN) to where a running queue's is,
// before the clock starts: ANALYZE, so the planner knows the tables'
// sizes (autovacuum would analyze them within a minute of the fill; a
// run that starts before would be planned for empty tables), then
// CHECKPOINT, so that no run inherits another's unwritten pages or a
// checkpoint due in its middle (the server's superuser may; a role that
// may not skips it), and the statement statistics of db reset.
func (b bench) ready(ctx context.Context, db string) error {
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("ANALYZE: %w", err)
	}
	_, _ = conn.Exec(ctx, "CHECKPOINT")
	return b.statements.reset(ctx, conn)
}

// findPostmaster returns the PID of the PostgreSQL server's postmaster: the
// parent of the backend serving a connection to dsn (pg_backend_pid()),
// when that backend is a process named postgres on this machine. Otherwise
// it returns an error: the server runs elsewhere (or in another PID
// namespace), and its CPU cannot be read here.
func findPostmaster(ctx context.Context, dsn string) (int, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, err
	}
	ppid, name, ok := cputime.Parent(backend)
	if !ok || name != "postgres" {
		return 0, fmt.Errorf("the server's backend (pid %d) is not a postgres process on this machine", backend)
	}
	return ppid, nil
}

// serverCPU returns the CPU time the PostgreSQL server has used so far: its
// postmaster's and every descendant's (cputime.Tree), the backends, the
// background writer, checkpointer and WAL writer, the autovacuum launcher
// and workers, those that have exited included (the postmaster waits for
// them, and their time moves to its cutime and cstime). 0 when the
// postmaster is not known.
func (b bench) serverCPU() time.Duration {
	if b.postmaster == 0 {
		return 0
	}
	d, _ := cputime.Tree(b.postmaster)
	return d
}

// work is a job's handler: it waits d (or until ctx is done, returning its
// error), holding its handler slot without using the CPU, as a job that
// waits on I/O does. With d 0 it returns at once.
func work(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// meter measures a run's wall time and CPU.
type meter struct {
	b                bench
	start            time.Time
	server0, client0 time.Duration
}

// meter starts measuring.
func (b bench) meter() meter { return meter{b, time.Now(), b.serverCPU(), cputime.Self()} }

func (m meter) stop() (wall, server, client time.Duration) {
	return time.Since(m.start), m.b.serverCPU() - m.server0, cputime.Self() - m.client0
}
