package telemetry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/telemetry"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// drainBegan closes began at the consumer's DrainBegan.
type drainBegan struct {
	sqsloop.NopObserver
	began chan struct{}
}

func (d drainBegan) Drain(e sqsloop.DrainEvent) {
	if e.Phase == sqsloop.DrainBegan {
		close(d.began)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// One call serves a consumer's metrics for Prometheus (the live queue
// signals, the middleware's counters, the Go runtime's), its probes, the
// lease page and drain mode, and keeps serving through the drain: /livez
// 200 and /readyz 503 while a handler finishes, /metrics still answering;
// once the group has returned, nothing listens.
func TestServesThroughTheDrain(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "quick"}, {Body: "slow"}}); err != nil {
		t.Fatal(err)
	}
	idem, err := idempotency.New(&jobstate.Memory{}, idempotency.Config{Queue: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	group := &lifecycle.LoopGroup{Logger: quiet}
	tel, err := telemetry.Start(group, telemetry.Config{Addr: "127.0.0.1:0", Queue: "jobs", Idempotency: idem})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + tel.Addr().String()
	slowRuns, release := make(chan struct{}), make(chan struct{})
	drain := drainBegan{began: make(chan struct{})}
	c, err := consumer.New(q, func(_ context.Context, m *sqsloop.Message) error {
		if m.Body == "slow" {
			close(slowRuns)
			<-release
		}
		return nil
	}, consumer.Config{Concurrency: 2, WaitTime: time.Second, Logger: quiet, Observer: sqsloop.Observers(tel.Observer(), drain),
		Middleware: []sqsloop.Middleware{idem.Middleware}, ShutdownTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := group.Add("consumer", c); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- group.Run(ctx) }()

	<-slowRuns
	for path, want := range map[string]int{lifecycle.LivezPath: 200, lifecycle.ReadyzPath: 200, telemetry.LeasesPath: 200, lifecycle.DrainPath: 200} {
		if code, _ := get(t, base+path); code != want {
			t.Errorf("GET %s = %d, want %d", path, code, want)
		}
	}
	// The queue's counts are read beside the first receives, not before
	// them: wait for the first read to reach the exporter.
	var metrics string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, metrics = get(t, base+telemetry.MetricsPath); strings.Contains(metrics, "sqsloop_queue_backlog{") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{"sqsloop_queue_backlog{", "sqsloop_queue_dead_letters{", "sqsloop_consumers_recommended{",
		"sqsloop_idempotency_runs_total{", "go_goroutines", `messaging_destination_name="jobs"`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	stop()
	<-drain.began
	if code, _ := get(t, base+lifecycle.ReadyzPath); code != http.StatusServiceUnavailable {
		t.Errorf("draining: /readyz = %d, want 503", code)
	}
	if code, _ := get(t, base+lifecycle.LivezPath); code != 200 {
		t.Errorf("draining: /livez = %d, want 200", code)
	}
	if code, _ := get(t, base+telemetry.MetricsPath); code != 200 {
		t.Errorf("draining: /metrics = %d, want 200", code)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base + lifecycle.LivezPath); err == nil {
		t.Error("the server still answers after the group returned")
	}
	if st := idem.Stats(); st.Ran != 2 {
		t.Errorf("idempotency ran %d, want 2", st.Ran)
	}
}

func TestStartChecks(t *testing.T) {
	group := &lifecycle.LoopGroup{}
	for _, cfg := range []telemetry.Config{{Queue: "jobs"}, {Addr: "127.0.0.1:0"}} {
		if _, err := telemetry.Start(group, cfg); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("Start(%+v) = %v, want ErrInvalidArgument", cfg, err)
		}
	}
	if _, err := telemetry.Start(nil, telemetry.Config{Addr: "127.0.0.1:0", Queue: "jobs"}); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("Start(nil group) = %v, want ErrInvalidArgument", err)
	}
	first, err := telemetry.Start(group, telemetry.Config{Addr: "127.0.0.1:0", Queue: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := telemetry.Start(&lifecycle.LoopGroup{}, telemetry.Config{Addr: first.Addr().String(), Queue: "jobs"}); err == nil {
		t.Error("a second server on the same address started")
	}
	if err := group.Run(canceled(t)); err != nil {
		t.Fatal(err)
	}
}

// canceled is a context already done: the group stops its loops at once.
func canceled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}
