package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/benchmarks/stats"
)

// timedMessages is how many messages the backlog check times.
const timedMessages = 5000

// backlogResult is one run of the index check.
type backlogResult struct {
	impl    string
	backlog int
	round   int
	wall    time.Duration
}

// runBacklog times the first timedMessages of a queue on dialect with
// backlog more messages waiting behind them.
func (b bench) runBacklog(ctx context.Context, dialect string, backlog int) (backlogResult, error) {
	st, where, closeAll, err := openStore(ctx, b.dsn, dialect)
	if err != nil {
		return backlogResult{}, err
	}
	defer closeAll()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		return backlogResult{}, err
	}
	progress("sqlmailbox/%s: %d + %d waiting", dialect, timedMessages, backlog)
	if err := enqueue(ctx, mb, timedMessages+backlog); err != nil {
		return backlogResult{}, err
	}
	if dialect == "postgres" {
		if err := b.ready(ctx, where); err != nil {
			return backlogResult{}, err
		}
	}
	start := time.Now()
	if err := b.consume(ctx, mb, timedMessages); err != nil {
		return backlogResult{}, err
	}
	return backlogResult{impl: "sqlmailbox/" + dialect, backlog: backlog, wall: time.Since(start)}, nil
}

// runBacklogRiver is runBacklog for River (with FetchCooldown cooldown).
func (b bench) runBacklogRiver(ctx context.Context, backlog int, cooldown time.Duration) (backlogResult, error) {
	progress("river: %d + %d waiting", timedMessages, backlog)
	r, err := b.newRiver(ctx, timedMessages+backlog, cooldown)
	if err != nil {
		return backlogResult{}, err
	}
	defer r.close()
	start := time.Now()
	if err := r.runUntil(ctx, timedMessages); err != nil {
		return backlogResult{}, err
	}
	return backlogResult{impl: riverName(cooldown), backlog: backlog, wall: time.Since(start)}, nil
}

// riverName names River's runs with FetchCooldown cooldown (0: its
// defaults).
func riverName(cooldown time.Duration) string {
	if cooldown > 0 {
		return fmt.Sprintf("river (FetchCooldown %v)", cooldown)
	}
	return "river (defaults)"
}

func (r result) jobsPerSecond() float64 { return float64(r.n) / r.wall.Seconds() }

// serverPer1000 is the database's CPU per 1,000 jobs, in milliseconds.
func (r result) serverPer1000() float64 { return float64(r.server.Microseconds()) / float64(r.n) }

func printResults(rows []result, b bench) {
	handler := "no-op (it returns at once)"
	if b.work > 0 {
		handler = fmt.Sprintf("a wait of %v (-work)", b.work)
	}
	fmt.Printf("%d handlers (River: MaxWorkers; the bare loops: goroutines); each job's handler is %s.\n\n", b.concurrency, handler)
	fmt.Println("Every run, in the order run:")
	fmt.Println()
	fmt.Println("| round | implementation | N | load | jobs/s | wall | database CPU | database CPU per 1,000 jobs | Go process CPU | Receive p50 / p99 | Delete p50 / p99 |")
	fmt.Println("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		lat := func(a, b time.Duration) string {
			if a == 0 {
				return "–"
			}
			return fmt.Sprintf("%s / %s", ms(a), ms(b))
		}
		db, per := "–", "–"
		if r.server > 0 {
			db = fmt.Sprintf("%.2f s", r.server.Seconds())
			per = fmt.Sprintf("%.1f ms", r.serverPer1000())
		}
		fmt.Printf("| %d | %s | %d | %.1f | %.0f | %.2f s | %s | %s | %.2f s | %s | %s |\n", r.round, r.impl, r.n, r.load, r.jobsPerSecond(),
			r.wall.Seconds(), db, per, r.client.Seconds(), lat(r.recv50, r.recv99), lat(r.del50, r.del99))
	}

	type key struct {
		impl string
		n    int
	}
	var keys []key
	byKey := map[key][]result{}
	for _, r := range rows {
		k := key{r.impl, r.n}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	slices.SortStableFunc(keys, func(a, b key) int { return a.n - b.n })
	median := func(rs []result, f func(result) float64) float64 {
		vs := make([]float64, len(rs))
		for i, r := range rs {
			vs[i] = f(r)
		}
		return stats.Median(vs)
	}
	fmt.Println("\nMedians of the rounds:")
	fmt.Println()
	fmt.Println("| implementation | N | runs | jobs/s | database CPU per 1,000 jobs | Go process CPU per 1,000 jobs |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range keys {
		rs := byKey[k]
		per := "–"
		if rs[0].server > 0 {
			per = fmt.Sprintf("%.1f ms", median(rs, result.serverPer1000))
		}
		fmt.Printf("| %s | %d | %d | %.0f | %s | %.1f ms |\n", k.impl, k.n, len(rs), median(rs, result.jobsPerSecond), per,
			median(rs, func(r result) float64 { return float64(r.client.Microseconds()) / float64(r.n) }))
	}

	// Ratios of sqlmailbox/postgres to each other contender, round by
	// round (the two ran minutes apart, on the same machine) and their
	// median.
	fmt.Println("\nsqlmailbox/postgres (and with a DLQ) ÷ each other contender, per round and the median of the rounds (jobs/s; database CPU per job):")
	fmt.Println()
	for _, k := range keys {
		if k.impl != "sqlmailbox/postgres" && k.impl != "sqlmailbox/postgres"+dlqSuffix {
			continue
		}
		for _, o := range keys {
			if o.n != k.n || strings.HasPrefix(o.impl, "sqlmailbox/") {
				continue
			}
			var speed, cpu []float64
			var each []string
			for _, r := range byKey[k] {
				for _, x := range byKey[o] {
					if x.round == r.round {
						s := r.jobsPerSecond() / x.jobsPerSecond()
						speed = append(speed, s)
						if r.server > 0 && x.server > 0 {
							cpu = append(cpu, r.serverPer1000()/x.serverPer1000())
						}
						each = append(each, fmt.Sprintf("%.2f×", s))
					}
				}
			}
			if len(speed) == 0 {
				continue
			}
			line := fmt.Sprintf("- N = %d, %s ÷ %s: %s, median %.2f× jobs/s", k.n, k.impl, o.impl, strings.Join(each, ", "), stats.Median(speed))
			if len(cpu) > 0 {
				line += fmt.Sprintf("; database CPU per job %.2f×", stats.Median(cpu))
			}
			fmt.Println(line)
		}
	}
}

func printBacklog(bs []backlogResult) {
	fmt.Printf("\nThe first %d jobs of a queue, with more waiting behind them (the receive reads an index, so the backlog should not matter):\n\n", timedMessages)
	fmt.Println("| round | implementation | waiting behind | jobs/s |")
	fmt.Println("| ---: | --- | ---: | ---: |")
	for _, b := range bs {
		fmt.Printf("| %d | %s | %d | %.0f |\n", b.round, b.impl, b.backlog, float64(timedMessages)/b.wall.Seconds())
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
