package integration

import (
	"context"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/otelsqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// A trace context set on the sending side is the link of the consumer's
// process span, through the real server: one message carries a producer
// span's context in its traceparent message attribute (written by
// otelsqsloop.InjectMessage, sent through the Mailbox), another a second
// producer span's in the AWSTraceHeader system attribute (sent with the raw
// SDK: a Mailbox cannot set system attributes). The consumer (20 s long
// polls) links each process span to its producer span, its receive spans
// link them too, its acks are delete spans of kind ack, and the metrics
// count the two runs and the two messages consumed.
func TestE2ETraceContextThroughTheServer(t *testing.T) {
	t.Parallel()
	h := sqsServerHarness(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: longLease})
	defer cleanup()
	url := q.Mailbox.(*sqsmailbox.Mailbox).QueueURL()

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs, err := otelsqsloop.New(otelsqsloop.Config{QueueURL: url, TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	tracer := tp.Tracer("producer")

	w3cCtx, w3cSpan := tracer.Start(ctx, "send w3c", trace.WithSpanKind(trace.SpanKindProducer))
	out := sqsloop.OutgoingMessage{Body: "w3c"}
	obs.InjectMessage(w3cCtx, &out)
	w3cSpan.End()
	res, err := q.Mailbox.Send(ctx, []sqsloop.OutgoingMessage{out})
	if err != nil || res[0].Err != nil {
		t.Fatalf("send: %v %+v", err, res)
	}
	w3cID := res[0].MessageID

	_, xraySpan := tracer.Start(ctx, "send xray", trace.WithSpanKind(trace.SpanKindProducer))
	xraySpan.End()
	client, err := sqsServer(t).NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(url), MessageBody: aws.String("xray"),
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(otelsqsloop.AWSTraceHeader(xraySpan.SpanContext()))},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	xrayID := aws.ToString(sent.MessageId)

	var mu sync.Mutex
	handled := map[string]bool{}
	all := make(chan struct{})
	c, err := consumer.New(q.Mailbox, func(ctx context.Context, m *sqsloop.Message) error {
		mu.Lock()
		defer mu.Unlock()
		if !handled[m.ID] {
			handled[m.ID] = true
			if len(handled) == 2 {
				close(all)
			}
		}
		return nil
	}, consumer.Config{Concurrency: 2, VisibilityTimeout: longLease, WaitTime: sqsloop.MaxWaitTime, Logger: quietLogger, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	select {
	case <-all:
	case <-time.After(patience):
		t.Fatalf("%s: handled %v within %v, want both messages", h.Name(), handled, patience)
	}
	acked := func() bool { return c.Stats().Acked == 2 }
	waitUntil(ctx, h, patience, 50*time.Millisecond, acked)
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	want := map[string]trace.SpanContext{w3cID: w3cSpan.SpanContext(), xrayID: xraySpan.SpanContext()}
	// Declared difference NoAWSTraceHeader: fauxqs 2.4.1 accepts a
	// message's AWSTraceHeader and never returns it, so there the X-Ray
	// message arrives without a creation context (checked below: a fauxqs
	// that starts returning it fails this test until the declaration goes).
	noXRay := sqsServer(t).Kind == KindFauxqs
	if noXRay {
		t.Logf("declared difference NoAWSTraceHeader on %s: the AWSTraceHeader sent is not returned; its link is not checked", h.Name())
		want[xrayID] = trace.SpanContext{}
	}
	seen, ackEntries := 0, int64(0)
	var receiveLinks []trace.SpanID
	for _, s := range spans.GetSpans().Snapshots() {
		attrs := attribute.NewSet(s.Attributes()...)
		switch s.Name() {
		case "process " + path.Base(url):
		case "receive " + path.Base(url):
			for _, l := range s.Links() {
				receiveLinks = append(receiveLinks, l.SpanContext.SpanID())
			}
			continue
		case "delete " + path.Base(url):
			kind, _ := attrs.Value("aws.sqs.settle.kind")
			n, _ := attrs.Value("messaging.batch.message_count")
			if s.SpanKind() != trace.SpanKindClient || kind.AsString() != "ack" || s.Status().Code != codes.Unset {
				t.Errorf("%s: delete span kind %v, aws.sqs.settle.kind %q, status %v; want CLIENT, ack, unset", h.Name(), s.SpanKind(), kind.AsString(), s.Status())
			}
			ackEntries += n.AsInt64()
			continue
		default:
			continue
		}
		v, _ := attrs.Value("messaging.message.id")
		id := v.AsString()
		sc, ok := want[id]
		if !ok {
			t.Errorf("%s: a process span for message %q", h.Name(), id)
			continue
		}
		seen++
		if !sc.IsValid() {
			if len(s.Links()) != 0 {
				t.Errorf("%s: the X-Ray message's process span links %+v: the server returns AWSTraceHeader now; drop the declared difference", h.Name(), s.Links())
			}
			continue
		}
		if len(s.Links()) != 1 || s.Links()[0].SpanContext.TraceID() != sc.TraceID() || s.Links()[0].SpanContext.SpanID() != sc.SpanID() {
			t.Errorf("%s: process span of %s links %+v, want the producer's %v", h.Name(), id, s.Links(), sc)
		}
	}
	if seen != 2 {
		t.Errorf("%s: %d process spans of the two messages, want 2", h.Name(), seen)
	}
	if ackEntries != 2 {
		t.Errorf("%s: the delete spans ack %d messages, want the 2 handled", h.Name(), ackEntries)
	}
	for _, sc := range want {
		if sc.IsValid() && !slices.Contains(receiveLinks, sc.SpanID()) {
			t.Errorf("%s: no receive span links the producer span %v", h.Name(), sc.SpanID())
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if v, _ := p.Attributes.Value(attribute.Key("messaging.operation.name")); m.Name == "messaging.process.duration" || v.AsString() == "delete" {
						counts[m.Name+" "+v.AsString()] += int64(p.Count)
					}
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					counts[m.Name] += p.Value
				}
			}
		}
	}
	if counts["messaging.process.duration process"] != 2 || counts["messaging.client.consumed.messages"] != 2 ||
		counts["messaging.client.operation.duration delete"] == 0 {
		t.Errorf("%s: metrics %v, want 2 runs, 2 messages consumed, a delete call", h.Name(), counts)
	}
}
