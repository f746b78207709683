package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/lifecycle"
)

// lineWriter passes what the worker prints to a channel, line by line.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(p), nil
		}
		select {
		case w.lines <- line:
		default:
		}
	}
}

// fetch GETs url and returns its body.
func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, body)
	}
	return string(body)
}

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

// With -metrics-addr the running worker serves Prometheus metrics with the
// process duration and lease metrics counting, its probes, and the lease
// page listing the jobs in flight (as JSON too). Wall clock: the server is
// real; every wait is on a condition, bounded.
func TestWorkerServesMetricsAndTheLeasePage(t *testing.T) {
	dir := t.TempDir()
	for i := range 24 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := &lineWriter{lines: make(chan string, 1024)}
	group := &lifecycle.LoopGroup{Signals: []os.Signal{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, options{dir: dir, slow: 100 * time.Millisecond, chunks: 40, concurrency: 8,
			progress: time.Second, metricsAddr: "127.0.0.1:0"}, group, out, log)
		done <- err
	}()
	var base string
	for base == "" {
		select {
		case line := <-out.lines:
			if m := regexp.MustCompile(`^serving (http://[^ ]+)/metrics`).FindStringSubmatch(line); m != nil {
				base = m[1]
			}
		case err := <-done:
			t.Fatalf("the worker ended before serving: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("no serving line")
		}
	}
	var metrics string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		metrics = fetch(t, base+"/metrics")
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
	var page struct {
		InFlight []struct {
			MessageID string `json:"message_id"`
			State     string `json:"state"`
		} `json:"in_flight"`
	}
	if err := json.Unmarshal([]byte(fetch(t, base+"/debug/sqsloop?format=json")), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.InFlight) == 0 {
		t.Error("the lease page lists no job in flight while jobs run")
	}
	html := fetch(t, base+"/debug/sqsloop")
	for _, l := range page.InFlight[:min(len(page.InFlight), 1)] {
		if !strings.Contains(html, l.MessageID) {
			t.Errorf("the HTML page lacks the in-flight job %s", l.MessageID)
		}
	}
	if got := fetch(t, base+"/readyz"); got != "ok\n" {
		t.Errorf("/readyz = %q", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
