package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// Paths --metrics-addr serves, beside the group's probes and drain mode.
const (
	metricsPath = "/metrics"
	leasesPath  = "/debug/sqsloop"
)

// telemetry is what --metrics-addr serves: the consumer's OpenTelemetry
// metrics (otelsqsloop) for Prometheus, the group's health probes and drain
// mode, and the lease page.
type telemetry struct {
	observer sqsloop.Observer
	server   *http.Server
	listener net.Listener
	meters   *sdkmetric.MeterProvider
}

// startTelemetry listens on addr and makes the observer of the consumer of
// q; its server is the loop telemetry.loop returns.
func startTelemetry(addr string, q *queue, group *lifecycle.LoopGroup, title string) (*telemetry, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	t := &telemetry{meters: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))}
	obs, err := otelsqsloop.New(otelsqsloop.Config{QueueURL: q.url, Queue: q.name, MeterProvider: t.meters})
	if err != nil {
		t.close()
		return nil, err
	}
	page := leasepage.New(leasepage.Options{Title: title + ": " + q.name})
	t.observer = sqsloop.Observers(obs, page)

	health, drain := group.HealthHandler(), group.DrainHandler()
	mux := http.NewServeMux()
	mux.Handle(metricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle(leasesPath, page)
	mux.Handle(lifecycle.LivezPath, health)
	mux.Handle(lifecycle.ReadyzPath, health)
	mux.Handle(lifecycle.DrainPath, drain)
	mux.Handle(lifecycle.ResumePath, drain)
	t.listener, err = net.Listen("tcp", addr)
	if err != nil {
		t.close()
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	t.server = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return t, nil
}

// loop serves the endpoints until the group stops it, last (see
// lifecycle.HTTPServer): they answer through the drain.
func (t *telemetry) loop() lifecycle.Runnable {
	return lifecycle.HTTPServer(t.server, t.listener)
}

// String says where it serves what.
func (t *telemetry) String() string {
	return fmt.Sprintf("http://%s (%s, %s, %s, %s, %s)", t.listener.Addr(), metricsPath, leasesPath,
		lifecycle.LivezPath, lifecycle.ReadyzPath, lifecycle.DrainPath)
}

// close stops the meter provider and the listener (closed already when
// the group ran the server).
func (t *telemetry) close() {
	if t.listener != nil {
		t.listener.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = t.meters.Shutdown(ctx)
}
