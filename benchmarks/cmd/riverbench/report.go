package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
)

// timedMessages is how many messages the backlog check times.
const timedMessages = 5000

// backlogResult is one run of the index check.
type backlogResult struct {
	impl    string
	backlog int
	wall    time.Duration
}

// runBacklog times the first timedMessages of a queue on dialect with
// backlog more messages waiting behind them.
func (b bench) runBacklog(ctx context.Context, dialect string, backlog int) (backlogResult, error) {
	st, _, closeAll, err := openStore(ctx, b.dsn, dialect)
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
	start := time.Now()
	if err := b.consume(ctx, mb, timedMessages); err != nil {
		return backlogResult{}, err
	}
	return backlogResult{"sqlmailbox/" + dialect, backlog, time.Since(start)}, nil
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
	name := "river (defaults)"
	if cooldown > 0 {
		name = fmt.Sprintf("river (FetchCooldown %v)", cooldown)
	}
	return backlogResult{name, backlog, time.Since(start)}, nil
}

func printResults(rows []result, b bench) {
	handler := "no-op (it returns at once)"
	if b.work > 0 {
		handler = fmt.Sprintf("a wait of %v (-work)", b.work)
	}
	fmt.Printf("%d handlers (River: MaxWorkers); each job's handler is %s.\n\n", b.concurrency, handler)
	fmt.Println("| implementation | N | jobs/s | wall | database CPU | database CPU per 1,000 jobs | Go process CPU | Receive p50 / p99 | Delete p50 / p99 |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		lat := func(a, b time.Duration) string {
			if a == 0 {
				return "–"
			}
			return fmt.Sprintf("%s / %s", ms(a), ms(b))
		}
		db := "–"
		per := "–"
		if r.server > 0 {
			db = fmt.Sprintf("%.2f s", r.server.Seconds())
			per = fmt.Sprintf("%.1f ms", float64(r.server.Milliseconds())*1000/float64(r.n))
		}
		fmt.Printf("| %s | %d | %.0f | %.2f s | %s | %s | %.2f s | %s | %s |\n", r.impl, r.n, float64(r.n)/r.wall.Seconds(),
			r.wall.Seconds(), db, per, r.client.Seconds(), lat(r.recv50, r.recv99), lat(r.del50, r.del99))
	}
	fmt.Println()
	for _, r := range rows {
		if r.impl != "sqlmailbox/postgres" {
			continue
		}
		for _, o := range rows {
			if o.n == r.n && strings.HasPrefix(o.impl, "river") {
				fmt.Printf("- N = %d: sqlmailbox/postgres ÷ %s = %.2f× (jobs/s)\n", r.n, o.impl, o.wall.Seconds()/r.wall.Seconds())
			}
		}
	}
}

func printBacklog(bs []backlogResult) {
	fmt.Printf("\nThe first %d jobs of a queue, with more waiting behind them (the receive reads an index, so the backlog should not matter):\n\n", timedMessages)
	fmt.Println("| implementation | waiting behind | jobs/s |")
	fmt.Println("| --- | ---: | ---: |")
	for _, b := range bs {
		fmt.Printf("| %s | %d | %.0f |\n", b.impl, b.backlog, float64(timedMessages)/b.wall.Seconds())
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
