// Command riverbench measures the consumer on sqlmailbox against River
// (github.com/riverqueue/river, the Go job queue on PostgreSQL people pick
// today) and against the floor of the pattern both are built on, side by
// side on the same PostgreSQL server: for each N, enqueue N jobs, then time
// until every one is done, with the same number of handlers (16; River:
// MaxWorkers 16; the bare loops: 16 goroutines). Each job's handler returns
// at once, or with -work waits that long. Each run gets a database of its
// own (created and dropped here), ANALYZEd and CHECKPOINTed before the
// clock starts.
//
// sqlmailbox runs twice: on a plain queue and on a queue with a
// dead-letter queue (maxReceiveCount 25, River's attempts), whose receive
// also moves over-received messages to the DLQ.
//
// The floor is two bare loops with no framework: a DELETE … WHERE id IN
// (SELECT … FOR UPDATE SKIP LOCKED LIMIT 10) RETURNING loop (at most once:
// a job is gone when taken), and a lease loop, UPDATE … SKIP LOCKED moving
// a visibility deadline and then DELETE by id (pgmq's read and delete),
// the least an at-least-once queue with leases does. -mailbox-loop adds
// sqlmailbox/postgres without the consumer (Receive 10, Delete), to tell
// the store's cost from the consumer's; -sqlite, sqlmailbox on SQLite.
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
// -rounds (3) runs every contender at every N once per round, in an order
// that turns from round to round, so that a machine whose load changes
// favours none; it prints every run with the load average as it began, the
// medians, and sqlmailbox's ratio to each other contender round by round.
// It reports jobs/s, the database server's CPU time (its postmaster's and
// every process's under it, exited backends and autovacuum workers
// included, from /proc: run it against a server on this machine), this
// process's CPU, the latency of sqlmailbox's Receive and Delete calls
// (p50/p99), how fast the first 5,000 of a queue are done with 100 and
// with 100,000 more waiting behind them (the receive reads an index, not
// the table), and, when the server loads pg_stat_statements, what each
// contender ran in its last round: calls per 1,000 jobs, plans per call,
// time and WAL per job, statement by statement.
//
//	eval "$(PG_FSYNC=on PG_SERVER_OPTS='-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on' \
//		../scripts/postgres.sh start $$)"   # or PG_DSN of a server on this machine
//	go run ./cmd/riverbench -n 10000,100000
//	go run ./cmd/riverbench -n 10000,100000 -work 5ms
//
// River runs with -river-cooldown (FetchCooldown, default 1 ms, the
// fastest it allows), and at its defaults only up to -river-defaults-max
// jobs (default 0: its FetchCooldown of 100 ms allows one fetch of at most
// MaxWorkers jobs per 100 ms, about 160 jobs/s at concurrency 16, so
// 100,000 take 10 minutes). The backlog check runs River tuned.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	dsn := flag.String("dsn", os.Getenv("PG_DSN"), "PostgreSQL server on this machine (default $PG_DSN)")
	ns := flag.String("n", "10000,100000", "numbers of jobs")
	rounds := flag.Int("rounds", 3, "rounds: each runs every contender at every N once, in an order that turns from round to round; the tables give each run and the medians")
	concurrency := flag.Int("concurrency", 16, "handlers (River: MaxWorkers; the bare loops: goroutines)")
	work := flag.Duration("work", 0, "each job's handler time: a wait that holds the handler slot (0: no-op jobs; the bare loops have none)")
	backlogs := flag.String("backlog", "100,100000", "messages waiting behind the 5,000 timed, for the index check (empty: skip)")
	cooldown := flag.Duration("river-cooldown", time.Millisecond, "River's FetchCooldown in its tuned run (0: no tuned run)")
	defaultsMax := flag.Int("river-defaults-max", 0, "largest N River also runs at its defaults (about 160 jobs/s at concurrency 16: 10,000 take a minute)")
	only := flag.String("only", "", "run only these of the contenders the other flags enable, by name: sqlmailbox, dlq (sqlmailbox on a queue with a dead-letter queue), mailbox (-mailbox-loop), river, delete (the bare DELETE loop), lease (the bare lease loop), river-defaults, sqlite (empty: all of them)")
	withSQLite := flag.Bool("sqlite", false, "also run sqlmailbox on SQLite")
	mailboxLoop := flag.Bool("mailbox-loop", false, "also run sqlmailbox/postgres without the consumer: goroutines that receive 10 and delete them (the Mailbox's own cost)")
	cpuprofile := flag.String("cpuprofile", "", "write to this file a CPU profile of the sqlmailbox/postgres consume at the largest N of the last round (from the first receive to the last ack: not the enqueue)")
	flag.Parse()
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "riverbench: no PostgreSQL server: set PG_DSN or -dsn (eval \"$(scripts/postgres.sh start $$)\" starts one)")
		os.Exit(2)
	}
	if *rounds < 1 {
		fmt.Fprintln(os.Stderr, "riverbench: -rounds must be at least 1")
		os.Exit(2)
	}
	ctx := context.Background()
	b := bench{dsn: *dsn, concurrency: *concurrency, work: *work}
	if pm, err := findPostmaster(ctx, *dsn); err != nil {
		progress("the database's CPU is not measured: %v", err)
	} else {
		b.postmaster = pm
	}
	b.statements = must(newStatements(ctx, *dsn))
	if b.statements == nil {
		progress("no pg_stat_statements on the server (PG_SERVER_OPTS=\"-c shared_preload_libraries=pg_stat_statements\"): no statement tables")
	}
	sizes := parseInts(*ns)
	var backlogSizes []int
	if *backlogs != "" {
		backlogSizes = parseInts(*backlogs)
	}
	var rows []result
	var bs []backlogResult
	for round := 1; round <= *rounds; round++ {
		for _, n := range sizes {
			var runs []func() (result, error)
			profile := ""
			if round == *rounds && n == sizes[len(sizes)-1] {
				profile = *cpuprofile
			}
			add := func(name string, on bool, run func() (result, error)) {
				if on && (*only == "" || slices.Contains(strings.Split(*only, ","), name)) {
					runs = append(runs, run)
				}
			}
			add("sqlmailbox", true, func() (result, error) { return b.runSQLMailbox(ctx, "postgres", n, profile, false, false) })
			add("dlq", true, func() (result, error) { return b.runSQLMailbox(ctx, "postgres", n, "", false, true) })
			add("mailbox", *mailboxLoop, func() (result, error) { return b.runSQLMailbox(ctx, "postgres", n, "", true, false) })
			add("river", *cooldown > 0, func() (result, error) { return b.runRiver(ctx, n, *cooldown) })
			add("delete", true, func() (result, error) { return b.runBare(ctx, deleteLoop, n) })
			add("lease", true, func() (result, error) { return b.runBare(ctx, leaseLoop, n) })
			add("river-defaults", n <= *defaultsMax, func() (result, error) { return b.runRiver(ctx, n, 0) })
			add("sqlite", *withSQLite, func() (result, error) { return b.runSQLMailbox(ctx, "sqlite", n, "", false, false) })
			for i := range runs {
				load := loadAverage()
				r := must(runs[(i+round-1)%len(runs)]())
				r.round, r.load = round, load
				rows = append(rows, r)
			}
		}
		for _, backlog := range backlogSizes {
			r := must(b.runBacklog(ctx, "postgres", backlog))
			r.round = round
			bs = append(bs, r)
			if *cooldown > 0 {
				r := must(b.runBacklogRiver(ctx, backlog, *cooldown))
				r.round = round
				bs = append(bs, r)
			}
		}
	}
	printResults(rows, b)
	if len(bs) > 0 {
		printBacklog(bs)
	}
	if b.statements != nil {
		fmt.Printf("\nWhat each ran in its last round (pg_stat_statements; its figures are the server's time in each statement, not CPU alone):\n")
		for _, r := range rows {
			if r.round == *rounds && len(r.stmts) > 0 {
				printStatements(r, b.statements.planning)
			}
		}
	}
}

// loadAverage returns the machine's load average over the last minute
// (/proc/loadavg), or -1 when it cannot be read.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
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
