package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// metricsPath is where -metrics-addr serves the metrics.
const metricsPath = "/metrics"

// telemetry is the OpenTelemetry of a run: metrics exported for Prometheus
// with -metrics-addr, spans printed with -trace stdout. Without either
// flag it observes nothing.
type telemetry struct {
	observer sqsloop.Observer        // nil: nothing observes
	handlers map[string]http.Handler // metricsPath, with -metrics-addr
	stop     []func(context.Context) error
}

// startTelemetry sets up what o asks for, for q; spans go to out.
func startTelemetry(o options, q *worker.Queue, out io.Writer) (*telemetry, error) {
	t := &telemetry{}
	if o.MetricsAddr == "" && o.trace == "" {
		return t, nil
	}
	cfg := otelsqsloop.Config{QueueURL: q.URL()} // the queue's name: the URL's last segment
	if q.URL() == "" {
		cfg.Queue = q.Name()
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
	if o.MetricsAddr != "" {
		reg := prometheus.NewRegistry()
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			t.close()
			return nil, err
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
		t.stop = append(t.stop, mp.Shutdown)
		cfg.MeterProvider = mp
		t.handlers = map[string]http.Handler{metricsPath: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	}
	obs, err := otelsqsloop.New(cfg)
	if err != nil {
		t.close()
		return nil, err
	}
	t.observer = obs
	return t, nil
}

// close flushes the spans and stops the providers.
func (t *telemetry) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, stop := range t.stop {
		_ = stop(ctx)
	}
}
