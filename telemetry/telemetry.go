// Package telemetry is a service's telemetry in one call: the library's
// metrics for Prometheus, the health probes, the lease page and drain mode
// on one address, served by the service's lifecycle.LoopGroup through its
// drain:
//
//	tel, err := telemetry.Start(group, telemetry.Config{Addr: ":9464", Queue: "jobs"})
//	c, err := consumer.New(mailbox, handler, consumer.Config{Observer: tel.Observer()})
//
// It serves, on Config.Addr:
//
//   - /metrics: the Prometheus exposition of the consumer's metrics (package
//     otelsqsloop's, through OpenTelemetry's SDK and its Prometheus
//     exporter: sqsloop_queue_backlog, sqsloop_consumers_recommended,
//     messaging_process_duration_seconds, …), the idempotency and
//     checkpoint middlewares' counters when Config names them, the metrics
//     the program makes on MeterProvider, and the Go runtime's and the
//     process's (go_*, process_*);
//   - /livez and /readyz: the group's probes (LoopGroup.HealthHandler);
//   - /debug/sqsloop: the lease page (package leasepage);
//   - /drain and /resume: drain mode (LoopGroup.DrainHandler; POST from
//     the loopback only, unless the group allows more).
//
// The server is the group's last loop (lifecycle.LoopOption{Last: true}):
// it answers through the drain (/livez 200, /readyz 503) and stops once
// every other loop has returned; then the meter provider stops too.
//
// It is the only package of the library that imports the OpenTelemetry SDK
// and the Prometheus client: the core (consumer, the mailboxes,
// otelsqsloop) compiles neither.
package telemetry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// The paths the server serves beside the group's (lifecycle.LivezPath,
// ReadyzPath, DrainPath, ResumePath).
const (
	// MetricsPath serves the metrics for Prometheus.
	MetricsPath = "/metrics"
	// LeasesPath serves the lease page.
	LeasesPath = "/debug/sqsloop"
)

// shutdownTimeout bounds the meter provider's shutdown as the server stops.
const shutdownTimeout = 2 * time.Second

// Config says where the server listens and what it reports.
type Config struct {
	// Addr is the TCP address to listen on ("127.0.0.1:9464", ":9464";
	// port 0 picks a free one: Server.Addr says which). Required.
	Addr string
	// Queue names the consumer's queue in the metrics
	// (messaging.destination.name) and the lease page's title; QueueURL is
	// its URL, when it has one (its last segment names the queue when
	// Queue is empty). One of them is required (see otelsqsloop.Config).
	Queue, QueueURL string
	// Title heads the lease page. Default: "sqsloop: " and the queue's
	// name.
	Title string
	// Idempotency and Checkpoints, when set, are the consumer's
	// middlewares, whose counts are reported too (otelsqsloop.Config).
	Idempotency *idempotency.Idempotency
	Checkpoints *checkpoint.Checkpoints
}

// Server is the telemetry server of one consumer. Its methods are safe for
// concurrent use.
type Server struct {
	observer sqsloop.Observer
	meters   *sdkmetric.MeterProvider
	listener net.Listener
	server   *http.Server
}

// Start listens on cfg.Addr and adds the server to group, as its last loop
// (named "telemetry"): it serves from group.Run until every other loop
// has returned. Give Observer to the consumer.
//
// Errors: one wrapping sqsloop.ErrInvalidArgument for a nil group, an
// empty Addr, or no queue named (otelsqsloop.New's); the listener's (an
// address in use); group.Add's (sqsloop.ErrAlreadyRunning once the group
// runs). Nothing is left open on an error.
func Start(group *lifecycle.LoopGroup, cfg Config) (*Server, error) {
	if group == nil || cfg.Addr == "" {
		return nil, fmt.Errorf("telemetry: Start: a LoopGroup and Config.Addr are required: %w", sqsloop.ErrInvalidArgument)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	s := &Server{meters: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))}
	obs, err := otelsqsloop.New(otelsqsloop.Config{Queue: cfg.Queue, QueueURL: cfg.QueueURL, MeterProvider: s.meters,
		Idempotency: cfg.Idempotency, Checkpoints: cfg.Checkpoints})
	if err != nil {
		return nil, errors.Join(err, s.stopMeters())
	}
	title := cfg.Title
	if title == "" {
		title = "sqsloop: " + cmp.Or(cfg.Queue, cfg.QueueURL)
	}
	page := leasepage.New(leasepage.Options{Title: title})
	s.observer = sqsloop.Observers(obs, page)

	health, drain := group.HealthHandler(), group.DrainHandler()
	mux := http.NewServeMux()
	mux.Handle(MetricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle(LeasesPath, page)
	mux.Handle(lifecycle.LivezPath, health)
	mux.Handle(lifecycle.ReadyzPath, health)
	mux.Handle(lifecycle.DrainPath, drain)
	mux.Handle(lifecycle.ResumePath, drain)
	if s.listener, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, errors.Join(fmt.Errorf("telemetry: %w", err), s.stopMeters())
	}
	s.server = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if err := group.Add("telemetry", loop{s}, lifecycle.LoopOption{Last: true}); err != nil {
		return nil, errors.Join(err, s.listener.Close(), s.stopMeters())
	}
	return s, nil
}

// Observer is the consumer's Observer: OpenTelemetry metrics
// (otelsqsloop, exported here) and the lease page.
func (s *Server) Observer() sqsloop.Observer { return s.observer }

// MeterProvider is the meter provider whose metrics /metrics serves: for
// the program's own metrics, and for more otelsqsloop Observers (a second
// queue).
func (s *Server) MeterProvider() metric.MeterProvider { return s.meters }

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// String says where it serves what: "http://127.0.0.1:9464 (/metrics,
// /debug/sqsloop, /livez, /readyz, /drain)".
func (s *Server) String() string {
	return fmt.Sprintf("http://%s (%s, %s, %s, %s, %s)", s.Addr(), MetricsPath, LeasesPath,
		lifecycle.LivezPath, lifecycle.ReadyzPath, lifecycle.DrainPath)
}

// loop is the server as the group runs it (lifecycle.Runnable).
type loop struct{ s *Server }

// Run serves until Shutdown, then stops the meter provider. It returns nil
// after Shutdown, else the server's error.
func (l loop) Run(context.Context) error {
	err := l.s.server.Serve(l.s.listener)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, l.s.stopMeters())
}

// Shutdown stops accepting and waits for the requests in progress until
// ctx is done, as http.Server.Shutdown does.
func (l loop) Shutdown(ctx context.Context) error { return l.s.server.Shutdown(ctx) }

// stopMeters shuts the meter provider down, within shutdownTimeout.
func (s *Server) stopMeters() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return s.meters.Shutdown(ctx)
}
