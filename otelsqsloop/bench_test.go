package otelsqsloop_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// The Observer's cost per message (ns/op and allocs/op are per message):
// the events of a consumer's message, in batches of 10 as a busy consumer
// sees them (one receive of 10, a handler run each, acked, one delete batch
// and one extension batch of 10); every message carries a producer's
// traceparent. Three setups: the API's no-op providers (what the package
// itself costs); a no-op tracer and the SDK's meter (metrics exported,
// traces not); the SDK's tracer, sampling everything with no exporter, and
// meter.
func BenchmarkObserver(b *testing.B) {
	sdkTracer := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer sdkTracer.Shutdown(context.Background())
	sdkMeter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer sdkMeter.Shutdown(context.Background())
	for _, c := range []struct {
		name string
		tp   trace.TracerProvider
		mp   metric.MeterProvider
	}{
		{"noop", tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()},
		{"noop-tracer-sdk-meter", tracenoop.NewTracerProvider(), sdkMeter},
		{"sdk", sdkTracer, sdkMeter},
	} {
		b.Run(c.name, func(b *testing.B) {
			obs, err := otelsqsloop.New(otelsqsloop.Config{QueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs",
				TracerProvider: c.tp, MeterProvider: c.mp})
			if err != nil {
				b.Fatal(err)
			}
			benchObserver(b, obs)
		})
	}
}

func benchObserver(b *testing.B, obs *otelsqsloop.Observer) {
	producer := sdktrace.NewTracerProvider()
	defer producer.Shutdown(context.Background())
	pctx, span := producer.Tracer("producer").Start(context.Background(), "send jobs")
	span.End()
	msgs := make([]*sqsloop.Message, sqsloop.MaxBatchSize)
	acks := make([]sqsloop.SettleEntry, len(msgs))
	extends := make([]sqsloop.SettleEntry, len(msgs))
	for i := range msgs {
		out := sqsloop.OutgoingMessage{Body: "job"}
		obs.InjectMessage(pctx, &out)
		msgs[i] = &sqsloop.Message{ID: fmt.Sprint("message-", i), ReceiveCount: 1, MessageAttributes: out.MessageAttributes}
		acks[i] = sqsloop.SettleEntry{Message: msgs[i], Kind: sqsloop.KindAck}
		extends[i] = sqsloop.SettleEntry{Message: msgs[i], Kind: sqsloop.KindExtend, Timeout: time.Minute, Left: 40 * time.Second}
	}
	ctx := context.Background()
	start := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += len(msgs) {
		obs.Received(ctx, sqsloop.ReceiveEvent{Start: start, Duration: 10 * time.Millisecond, MaxMessages: 10, Messages: msgs, Held: 10})
		obs.Settled(sqsloop.SettleEvent{Op: sqsloop.OpChangeVisibility, Start: start, Duration: 5 * time.Millisecond, Entries: extends, Held: 10})
		for _, m := range msgs {
			pctx := obs.ProcessStart(ctx, m)
			obs.ProcessEnd(pctx, m, sqsloop.ProcessEvent{Outcome: sqsloop.OutcomeAcked, Duration: time.Second})
		}
		obs.Settled(sqsloop.SettleEvent{Op: sqsloop.OpDelete, Start: start, Duration: 5 * time.Millisecond, Entries: acks})
	}
}
