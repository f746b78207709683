package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/examples/internal/worker/workertest"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// metricValue sums the samples of a Prometheus metric in text.
func metricValue(text, name string) (float64, bool) {
	total, found := 0.0, false
	for _, m := range regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(name)+`(?:\{[^}]*\})? ([0-9.e+-]+)$`).FindAllStringSubmatch(text, -1) {
		var v float64
		fmt.Sscan(m[1], &v)
		total, found = total+v, true
	}
	return total, found
}

// With -metrics-addr the running job serves Prometheus metrics with the
// process duration and lease metrics counting, beside the probes and the
// lease page (tested in package worker). Wall clock: the server is real;
// every wait is on a condition, bounded.
func TestOtelWorkerServesMetrics(t *testing.T) {
	o := options{Options: worker.Options{Dir: workertest.Files(t, 24, "f"), Slow: 100 * time.Millisecond, Chunks: 40, Concurrency: 8,
		Progress: time.Second, MetricsAddr: "127.0.0.1:0"}}
	base, stop := workertest.Serve(t, func(ctx context.Context, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) error {
		_, err := o.run(ctx, group, out, log)
		return err
	})
	var metrics string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		metrics = workertest.Fetch(t, base+metricsPath)
		acked, _ := metricValue(metrics, "messaging_process_duration_seconds_count")
		ext, _ := metricValue(metrics, "sqsloop_lease_extensions_total")
		if acked > 0 && ext > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no handler run or extension counted within a minute:\n%s", metrics)
		}
	}
	for _, name := range []string{"sqsloop_messages_in_flight", "sqsloop_receive_ahead_depth", "messaging_client_consumed_messages_total",
		"messaging_client_operation_duration_seconds_count"} {
		if _, ok := metricValue(metrics, name); !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if n, _ := metricValue(metrics, "sqsloop_messages_in_flight"); n <= 0 {
		t.Errorf("sqsloop_messages_in_flight %v while jobs run", n)
	}
	if got := workertest.Fetch(t, base+lifecycle.ReadyzPath); got != "ok\n" {
		t.Errorf("%s = %q", lifecycle.ReadyzPath, got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
