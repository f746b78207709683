package otelsqsloop_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/otelsqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// telemetry is an in-memory OpenTelemetry SDK: spans exported as they end,
// metrics read on demand.
type telemetry struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

func (tel *telemetry) observer(t *testing.T, queue string) *otelsqsloop.Observer {
	t.Helper()
	obs, err := otelsqsloop.New(otelsqsloop.Config{Queue: queue, QueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/" + queue,
		TracerProvider: tel.tp, MeterProvider: tel.mp})
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// named returns the ended spans called name.
func (tel *telemetry) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.GetSpans().Snapshots() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func str(s sdktrace.ReadOnlySpan, key string) string {
	v, _ := attr(s, key)
	return v.Emit()
}

// metrics reads every metric, by name.
func (tel *telemetry) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// total sums a counter's or a histogram's count over the data points whose
// attributes include every one of with.
func total(t *testing.T, m metricdata.Metrics, with ...attribute.KeyValue) int64 {
	t.Helper()
	match := func(set attribute.Set) bool {
		for _, kv := range with {
			if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
				return false
			}
		}
		return true
	}
	var n int64
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes) {
				n += p.Value
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes) {
				n += int64(p.Count)
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if match(p.Attributes) {
				n += p.Value
			}
		}
	default:
		t.Fatalf("metric %s: unexpected data %T", m.Name, m.Data)
	}
	return n
}

// A consumer on memmailbox with the Observer: a producer's span context,
// injected as traceparent, is the link of the process span of its message;
// the handler's own spans are children of the process span; every receive,
// process, delete and visibility change has its span with the messaging
// conventions' names, kinds and attributes; and the metrics count what
// happened: 4 handler runs by outcome, the messages consumed, extensions
// of the job that outlives its lease.
func TestSpansAndMetricsOnMemmailbox(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tel := newTelemetry(t)
		obs := tel.observer(t, "jobs")
		q := jobsQueue(t)
		tracer := tel.tp.Tracer("test")
		ctx, send := tracer.Start(t.Context(), "send jobs", trace.WithSpanKind(trace.SpanKindProducer))
		traced := sqsloop.OutgoingMessage{Body: "long"}
		obs.InjectMessage(ctx, &traced)
		send.End()
		if _, ok := traced.MessageAttributes["traceparent"]; !ok {
			t.Fatalf("InjectMessage wrote no traceparent: %v", traced.MessageAttributes)
		}
		res, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{traced, {Body: "quick"}, {Body: "fail"}, {Body: "panic"}})
		if err != nil {
			t.Fatal(err)
		}
		tracedID := res[0].MessageID

		var wg sync.WaitGroup
		wg.Add(4)
		c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
			defer wg.Done()
			_, work := tracer.Start(ctx, "work "+m.Body)
			defer work.End()
			switch m.Body {
			case "long": // outlives its 2 s lease 2.5 times: extended while it beats
				for range 10 {
					time.Sleep(500 * time.Millisecond)
					heartbeat.Beat(ctx)
				}
			case "fail":
				return errors.New("boom")
			case "panic":
				panic("kaboom")
			}
			return nil
		}, consumer.Config{
			Concurrency: 4, VisibilityTimeout: 2 * time.Second, WaitTime: time.Second,
			Visibility: visibility.Config{Interval: 400 * time.Millisecond},
			Backoff:    func(int) time.Duration { return time.Hour },
			Logger:     quiet, Observer: obs,
		})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Run(context.Background()) }()
		wg.Wait()
		time.Sleep(time.Second) // the acks' and nacks' batch windows
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}

		procs := tel.named("process jobs")
		if len(procs) != 4 {
			t.Fatalf("%d process spans, want 4", len(procs))
		}
		outcomes := map[string]string{}
		for _, s := range procs {
			checkProcessSpan(t, s, "https://sqs.us-east-1.amazonaws.com/123456789012/jobs")
			outcomes[str(s, "messaging.message.id")] = str(s, "sqsloop.outcome")
			id := str(s, "messaging.message.id")
			if id == tracedID {
				if len(s.Links()) != 1 || s.Links()[0].SpanContext.TraceID() != send.SpanContext().TraceID() ||
					s.Links()[0].SpanContext.SpanID() != send.SpanContext().SpanID() {
					t.Errorf("the traced message's process span links %+v, want the producer's span %v", s.Links(), send.SpanContext())
				}
				if s.Parent().TraceID() == send.SpanContext().TraceID() {
					t.Errorf("the process span is a child of the producer's span; the conventions' default is a link")
				}
			} else if len(s.Links()) != 0 {
				t.Errorf("process span of untraced message %s has links %+v", id, s.Links())
			}
		}
		got := slices.Sorted(func(yield func(string) bool) {
			for _, o := range outcomes {
				if !yield(o) {
					return
				}
			}
		})
		if !slices.Equal(got, []string{"acked", "acked", "nacked", "panicked"}) {
			t.Errorf("outcomes %v, want acked ×2, nacked, panicked", got)
		}
		for _, s := range procs {
			switch str(s, "sqsloop.outcome") {
			case "panicked":
				if str(s, "error.type") != "panic" {
					t.Errorf("panicked process span error.type %q, want panic", str(s, "error.type"))
				}
			case "nacked":
				if str(s, "error.type") != "_OTHER" {
					t.Errorf("nacked process span error.type %q, want _OTHER (an errors.New)", str(s, "error.type"))
				}
			}
		}
		for _, w := range tel.named("work long") {
			parent := tel.spanByID(w.Parent().SpanID())
			if parent == nil || parent.Name() != "process jobs" {
				t.Errorf("the handler's span is not a child of its process span")
			}
		}

		recv := tel.named("receive jobs")
		linked, counted := false, 0
		for _, s := range recv {
			if s.SpanKind() != trace.SpanKindClient || str(s, "messaging.operation.type") != "receive" {
				t.Errorf("receive span kind %v type %q", s.SpanKind(), str(s, "messaging.operation.type"))
			}
			v, _ := attr(s, "messaging.batch.message_count")
			counted += int(v.AsInt64())
			for _, l := range s.Links() {
				linked = linked || l.SpanContext.SpanID() == send.SpanContext().SpanID()
			}
		}
		if counted != 4 || !linked {
			t.Errorf("receive spans count %d messages (want 4) and link the producer: %v", counted, linked)
		}
		kinds := map[string]int{}
		for _, name := range []string{"delete jobs", "change_visibility jobs"} {
			for _, s := range tel.named(name) {
				if s.SpanKind() != trace.SpanKindClient || str(s, "messaging.operation.type") != "settle" {
					t.Errorf("%s kind %v type %q", name, s.SpanKind(), str(s, "messaging.operation.type"))
				}
				kinds[name+": "+str(s, "aws.sqs.settle.kind")]++
			}
		}
		for _, want := range []string{"delete jobs: ack", "change_visibility jobs: extend"} {
			if kinds[want] == 0 {
				t.Errorf("no %q span; settle spans: %v", want, kinds)
			}
		}
		if kinds["change_visibility jobs: nack"] == 0 && kinds["change_visibility jobs: nack,give_back"] == 0 {
			t.Errorf("no nack span; settle spans: %v", kinds)
		}

		ms := tel.metrics(t)
		for _, name := range []string{"messaging.process.duration", "messaging.client.consumed.messages", "messaging.client.operation.duration",
			"sqsloop.lease.extensions", "sqsloop.messages.in_flight", "sqsloop.receive_ahead.depth", "sqsloop.settled.messages"} {
			if _, ok := ms[name]; !ok {
				t.Errorf("no metric %s", name)
			}
		}
		if n := total(t, ms["messaging.process.duration"]); n != 4 {
			t.Errorf("messaging.process.duration counts %d runs, want 4", n)
		}
		if n := total(t, ms["messaging.process.duration"], attribute.String("sqsloop.outcome", "acked")); n != 2 {
			t.Errorf("%d acked runs, want 2", n)
		}
		if n := total(t, ms["messaging.client.consumed.messages"]); n != 4 {
			t.Errorf("messaging.client.consumed.messages %d, want 4", n)
		}
		if n := total(t, ms["sqsloop.lease.extensions"]); n < 2 {
			t.Errorf("sqsloop.lease.extensions %d, want the long job's (≥ 2)", n)
		}
		for _, op := range []string{"receive", "delete", "change_visibility"} {
			if total(t, ms["messaging.client.operation.duration"], attribute.String("messaging.operation.name", op)) == 0 {
				t.Errorf("messaging.client.operation.duration has no %s call", op)
			}
		}
		if n := total(t, ms["sqsloop.settled.messages"], attribute.String("aws.sqs.settle.kind", "ack")); n != 2 {
			t.Errorf("sqsloop.settled.messages of kind ack %d, want 2", n)
		}
	})
}

// jobsQueue is a memmailbox queue "jobs", closed with the test.
func jobsQueue(t *testing.T) *memmailbox.Queue {
	t.Helper()
	b := new(memmailbox.Broker)
	t.Cleanup(func() { b.Close() })
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func (tel *telemetry) spanByID(id trace.SpanID) sdktrace.ReadOnlySpan {
	for _, s := range tel.spans.GetSpans().Snapshots() {
		if s.SpanContext().SpanID() == id {
			return s
		}
	}
	return nil
}

// A handler that never beats on a 1 s lease: its lease is lost for
// no_beats with never_beat set, and its late result counted apart.
func TestLostLeaseAndLateResultOfAHandlerThatNeverBeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tel := newTelemetry(t)
		obs := tel.observer(t, "jobs")
		q := jobsQueue(t)
		if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "slow"}}); err != nil {
			t.Fatal(err)
		}
		ran := make(chan struct{})
		c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
			if m.ReceiveCount == 1 {
				time.Sleep(3 * time.Second) // no beat at all
				close(ran)
			}
			return nil
		}, consumer.Config{Concurrency: 1, VisibilityTimeout: time.Second, WaitTime: time.Second, Logger: quiet, Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Run(context.Background()) }()
		<-ran
		time.Sleep(time.Second)
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-done
		ms := tel.metrics(t)
		if n := total(t, ms["sqsloop.lease.lost"], attribute.String("sqsloop.lease.lost_reason", "no_beats"), attribute.Bool("sqsloop.never_beat", true)); n != 1 {
			t.Errorf("sqsloop.lease.lost{no_beats, never_beat} = %d, want 1", n)
		}
		if n := total(t, ms["sqsloop.process.late_results"], attribute.Bool("sqsloop.never_beat", true)); n != 1 {
			t.Errorf("sqsloop.process.late_results{never_beat} = %d, want 1", n)
		}
		lost := 0
		for _, s := range tel.named("process jobs") {
			if str(s, "sqsloop.outcome") == "lease_lost" {
				lost++
			}
		}
		if lost != 1 {
			t.Errorf("%d process spans with outcome lease_lost, want 1", lost)
		}
	})
}
