package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// Paths the worker serves with -metrics-addr (besides lifecycle's /livez
// and /readyz).
const (
	metricsPath = "/metrics"
	leasesPath  = "/debug/sqsloop"
)

// telemetry is the worker's view from outside: OpenTelemetry metrics
// exported for Prometheus, spans printed with -trace stdout, and, with
// -metrics-addr, one HTTP server for the metrics, the health probes and the
// lease page. Without either flag it observes nothing.
type telemetry struct {
	observer sqsloop.Observer // nil: nothing observes
	server   *http.Server     // nil without -metrics-addr
	listener net.Listener
	stop     []func(context.Context) error
}

// startTelemetry sets up what o asks for, for the queue at url (the SQS
// queue opened, whichever flags named it; "" for the queue "jobs" in memory
// or in a database), with group's health probes; spans go to out.
func startTelemetry(o options, url string, group *lifecycle.LoopGroup, out io.Writer) (*telemetry, error) {
	t := &telemetry{}
	if o.metricsAddr == "" && o.trace == "" {
		return t, nil
	}
	cfg := otelsqsloop.Config{QueueURL: url} // the queue's name: the URL's last segment
	if url == "" {
		cfg.Queue = queueName
	}
	switch o.trace {
	case "":
	case "stdout":
		exp, err := stdouttrace.New(stdouttrace.WithWriter(out))
		if err != nil {
			return nil, err
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)))
		t.stop = append(t.stop, tp.Shutdown)
		cfg.TracerProvider = tp
	default:
		return nil, fmt.Errorf("-trace: want stdout or nothing, got %q", o.trace)
	}
	var page *leasepage.Page
	if o.metricsAddr != "" {
		reg := prometheus.NewRegistry()
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			return nil, err
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
		t.stop = append(t.stop, mp.Shutdown)
		cfg.MeterProvider = mp
		page = leasepage.New(leasepage.Options{Title: "sqsloop worker: " + cmp.Or(cfg.Queue, path.Base(url))})
		mux := http.NewServeMux()
		mux.Handle(metricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.Handle(leasesPath, page)
		health := group.HealthHandler()
		mux.Handle(lifecycle.LivezPath, health)
		mux.Handle(lifecycle.ReadyzPath, health)
		ln, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			return nil, fmt.Errorf("-metrics-addr: %w", err)
		}
		t.listener = ln
		t.server = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	}
	obs, err := otelsqsloop.New(cfg)
	if err != nil {
		t.close()
		return nil, err
	}
	if page != nil {
		t.observer = sqsloop.Observers(obs, page)
	} else {
		t.observer = obs
	}
	return t, nil
}

// addr is where the server listens ("" without -metrics-addr).
func (t *telemetry) addr() string {
	if t.listener == nil {
		return ""
	}
	return t.listener.Addr().String()
}

// loop is the server as a loop of the worker's group, stopped last
// (lifecycle.LoopOption.Last): the probes, the metrics and the lease page answer
// through the drain (/livez 200, /readyz 503) until the consumer and the
// monitor have returned.
func (t *telemetry) loop() lifecycle.Runnable { return lifecycle.HTTPServer(t.server, t.listener) }

// close flushes the spans and stops the providers and the listener.
func (t *telemetry) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, stop := range t.stop {
		_ = stop(ctx)
	}
	if t.listener != nil {
		_ = t.listener.Close() // already closed if the server ran
	}
}
