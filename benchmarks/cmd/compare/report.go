package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sqsloop/sqsloop/benchmarks/stats"
	"github.com/sqsloop/sqsloop/benchmarks/wire"
)

func medianOf(rs []result, f func(result) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return stats.Median(xs)
}

func maxOf(rs []result, f func(result) float64) float64 {
	m := 0.0
	for _, r := range rs {
		m = max(m, f(r))
	}
	return m
}

// shortAction names the action columns of the table.
var shortAction = map[string]string{
	wire.ReceiveMessage:               "Receive",
	wire.DeleteMessage:                "Delete",
	wire.DeleteMessageBatch:           "DeleteBatch",
	wire.ChangeMessageVisibility:      "ChangeVis",
	wire.ChangeMessageVisibilityBatch: "ChangeVisBatch",
}

// group is the runs of one implementation on one scenario.
type group struct {
	scenario, impl string
	runs           []result
}

// groups gathers results by scenario and implementation, in first-seen
// order.
func groups(rs []result) []group {
	var out []group
	for _, r := range rs {
		i := slices.IndexFunc(out, func(g group) bool { return g.scenario == r.scenario && g.impl == r.impl })
		if i < 0 {
			out = append(out, group{scenario: r.scenario, impl: r.impl})
			i = len(out) - 1
		}
		out[i].runs = append(out[i].runs, r)
	}
	return out
}

// writeTable writes the markdown table of medians, one row per scenario
// and implementation.
func writeTable(w io.Writer, rs []result) {
	cols := []string{"scenario", "impl", "runs", "wall s", "all handled s", "msgs/s"}
	for _, a := range wire.ConsumerActions {
		cols = append(cols, shortAction[a])
	}
	cols = append(cols, "other", "req/msg", "CPU µs/msg", "server CPU µs/msg", "duplicates", "undeleted")
	fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(cols)))
	for _, g := range groups(rs) {
		failed := 0
		for _, r := range g.runs {
			if r.err != nil || r.countCheck != nil {
				failed++
			}
		}
		runs := fmt.Sprint(len(g.runs))
		if failed > 0 {
			runs += fmt.Sprintf(" (%d failed)", failed)
		}
		row := []string{g.scenario, g.impl, runs,
			fmt.Sprintf("%.2f", medianOf(g.runs, func(r result) float64 { return r.wall.Seconds() })),
			fmt.Sprintf("%.2f", medianOf(g.runs, func(r result) float64 { return r.allHandled.Seconds() })),
			fmt.Sprintf("%.0f", medianOf(g.runs, result.msgsPerSec)),
		}
		known := map[string]bool{}
		for _, a := range wire.ConsumerActions {
			known[a] = true
			row = append(row, fmt.Sprintf("%g", medianOf(g.runs, func(r result) float64 { return float64(r.requests[a]) })))
		}
		row = append(row,
			fmt.Sprintf("%g", medianOf(g.runs, func(r result) float64 { return float64(other(r.requests, known)) })),
			fmt.Sprintf("%.3f", medianOf(g.runs, result.reqPerMsg)),
			fmt.Sprintf("%.0f", medianOf(g.runs, result.cpuPerMsg)),
			serverCPU(g.runs),
			medMax(g.runs, func(r result) float64 { return float64(r.duplicates) }),
			medMax(g.runs, func(r result) float64 { return float64(r.left.total()) }),
		)
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}

// other counts requests of actions not in known (GetQueueAttributes, …).
func other(c wire.Counts, known map[string]bool) int64 {
	var n int64
	for a, v := range c {
		if !known[a] {
			n += v
		}
	}
	return n
}

// medMax formats a median, adding the maximum when it differs.
func medMax(rs []result, f func(result) float64) string {
	med, mx := medianOf(rs, f), maxOf(rs, f)
	if med == mx {
		return fmt.Sprintf("%g", med)
	}
	return fmt.Sprintf("%g (max %g)", med, mx)
}

// serverCPU formats the median server CPU per message, or "n/a" when the
// server is not our child process.
func serverCPU(rs []result) string {
	for _, r := range rs {
		if !r.hasServerCPU {
			return "n/a"
		}
	}
	return fmt.Sprintf("%.0f", medianOf(rs, result.serverCPUPerMsg))
}

// writeWorkersTable writes the table of the scenarios of several workers
// on one queue: how the handler runs were spread over the workers (each
// repetition), the largest receive count a handler saw, duplicates, and
// the buffer waits (see workerStats). It writes nothing when no result has
// several workers.
func writeWorkersTable(w io.Writer, rs []result) {
	var multi []result
	for _, r := range rs {
		if r.workers != nil {
			multi = append(multi, r)
		}
	}
	if len(multi) == 0 {
		return
	}
	cols := []string{"scenario", "impl", "runs", "wall s", "handled by A/B, each run", "duplicates", "largest receive count",
		"largest buffer wait s (median, max)", "summed buffer wait s", fmt.Sprintf("jobs waiting > %v", roundTripBound)}
	fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(cols)))
	for _, g := range groups(multi) {
		var spreads []string
		for _, r := range g.runs {
			spreads = append(spreads, spread(r.workers.handled))
		}
		largest := func(r result) float64 { return r.workers.largestWait.Seconds() }
		row := []string{g.scenario, g.impl, fmt.Sprint(len(g.runs)),
			fmt.Sprintf("%.2f", medianOf(g.runs, func(r result) float64 { return r.wall.Seconds() })),
			strings.Join(spreads, ", "),
			medMax(g.runs, func(r result) float64 { return float64(r.duplicates) }),
			medMax(g.runs, func(r result) float64 { return float64(r.maxReceiveCount) }),
			fmt.Sprintf("%.2f, %.2f", medianOf(g.runs, largest), maxOf(g.runs, largest)),
			fmt.Sprintf("%.2f", medianOf(g.runs, func(r result) float64 { return r.workers.totalWait.Seconds() })),
			medMax(g.runs, func(r result) float64 { return float64(r.workers.waitedLong) }),
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}
