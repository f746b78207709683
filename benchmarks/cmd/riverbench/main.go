// Command riverbench measures the consumer on sqlmailbox against River
// (github.com/riverqueue/river, the Go job queue on PostgreSQL people pick
// today), side by side in one run on the same PostgreSQL server, and
// sqlmailbox on SQLite beside them: for each N, enqueue N jobs, then time
// until every one is done, with the same number of handlers (16; River:
// MaxWorkers 16). Each job's handler returns at once, or with -work waits
// that long. Each run gets a database of its own (created and dropped
// here), so neither queue sees the other's tables.
//
// The handler count is the same; what each side holds is not. With no-op
// handlers the consumer's receive-ahead keeps up to 32 receives of 10 in
// flight and holds up to 16 + 320 messages, where River holds at most
// MaxWorkers jobs and fetches again after FetchCooldown. So the no-op
// comparison measures how fast each moves jobs through the database when
// handlers cost nothing (its per-job overhead and how much it overlaps),
// not the two held to the same number of jobs in flight. With -work 5ms the
// 16 slots bound both at 3,200 jobs/s, the receive-ahead shrinks (it is
// sized from the handler time), and the figures say whether each reaches
// the bound and at what database CPU per job.
//
// It reports jobs/s, the database server's CPU time (its postmaster's and
// every process's under it, exited backends and autovacuum workers
// included, from /proc: run it against a server on this machine), this
// process's CPU, the latency of sqlmailbox's Receive and Delete calls
// (p50/p99), and, to show the receive reads an index rather than the table,
// how fast the first 5,000 of a queue are done with 100 and with 100,000
// more waiting behind them.
//
//	eval "$(../scripts/postgres.sh start $$)"   # or PG_DSN of a server on this machine
//	go run ./cmd/riverbench -n 10000,100000
//	go run ./cmd/riverbench -n 10000,100000 -work 5ms
//
// River runs at its defaults (FetchCooldown 100 ms: one fetch of at most
// MaxWorkers jobs per 100 ms, so about 160 jobs/s at concurrency 16; only
// up to -river-defaults-max jobs, since 100,000 would take 10 minutes) and,
// so that its defaults are not all the comparison says, with
// -river-cooldown (default 1 ms). The backlog check runs River tuned.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

func main() {
	dsn := flag.String("dsn", os.Getenv("PG_DSN"), "PostgreSQL server on this machine (default $PG_DSN)")
	ns := flag.String("n", "10000,100000", "numbers of jobs")
	concurrency := flag.Int("concurrency", 16, "handlers (River: MaxWorkers)")
	work := flag.Duration("work", 0, "each job's handler time: a wait that holds the handler slot (0: no-op jobs)")
	backlogs := flag.String("backlog", "100,100000", "messages waiting behind the 5,000 timed, for the index check (empty: skip)")
	cooldown := flag.Duration("river-cooldown", time.Millisecond, "River's FetchCooldown in its tuned run (0: no tuned run)")
	defaultsMax := flag.Int("river-defaults-max", 10000, "largest N River runs at its defaults (about 160 jobs/s at concurrency 16: 100,000 take 10 minutes)")
	withSQLite := flag.Bool("sqlite", true, "also run sqlmailbox on SQLite")
	cpuprofile := flag.String("cpuprofile", "", "write to this file a CPU profile of the sqlmailbox/postgres consume at the largest N (from the first receive to the last ack: not the enqueue)")
	flag.Parse()
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "riverbench: no PostgreSQL server: set PG_DSN or -dsn (eval \"$(scripts/postgres.sh start $$)\" starts one)")
		os.Exit(2)
	}
	ctx := context.Background()
	b := bench{dsn: *dsn, concurrency: *concurrency, work: *work}
	if pm, err := findPostmaster(ctx, *dsn); err != nil {
		progress("the database's CPU is not measured: %v", err)
	} else {
		b.postmaster = pm
	}
	var rows []result
	sizes := parseInts(*ns)
	for _, n := range sizes {
		profile := ""
		if n == sizes[len(sizes)-1] {
			profile = *cpuprofile
		}
		rows = append(rows, must(b.runSQLMailbox(ctx, "postgres", n, profile)))
		if n <= *defaultsMax {
			rows = append(rows, must(b.runRiver(ctx, n, 0)))
		} else {
			progress("river (defaults): skipped at N = %d (-river-defaults-max %d)", n, *defaultsMax)
		}
		if *cooldown > 0 {
			rows = append(rows, must(b.runRiver(ctx, n, *cooldown)))
		}
		if *withSQLite {
			rows = append(rows, must(b.runSQLMailbox(ctx, "sqlite", n, "")))
		}
	}
	printResults(rows, b)
	if *backlogs != "" {
		var bs []backlogResult
		for _, backlog := range parseInts(*backlogs) {
			bs = append(bs, must(b.runBacklog(ctx, "postgres", backlog)))
			bs = append(bs, must(b.runBacklogRiver(ctx, backlog, *cooldown)))
			if *withSQLite {
				bs = append(bs, must(b.runBacklog(ctx, "sqlite", backlog)))
			}
		}
		printBacklog(bs)
	}
}

// startProfile starts a CPU profile to path; the returned func stops it.
// With path empty it does nothing.
func startProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "riverbench:", err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "riverbench:", err)
		os.Exit(1)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

func parseInts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "riverbench: %q is not a positive number\n", f)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, "riverbench:", err)
		os.Exit(1)
	}
	return v
}

// progress writes a line to standard error.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "riverbench: "+format+"\n", args...)
}
