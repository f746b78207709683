package otelsqsloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/otelsqsloop"
	"github.com/sqsloop/sqsloop/sqslambda"
)

// The same Observer on AWS Lambda (sqslambda.Config.Observer), from an
// event as Lambda delivers it (sqslambda's fixture traced.json, queue
// "jobs" in us-east-2): one process span per record, named and attributed
// as for the consumer, a child of the invocation's span (as Lambda's own
// instrumentation would start one) and the parent of the handler's spans,
// linked to the producer's context of each record: its traceparent message
// attribute (record 1), its AWSTraceHeader system attribute (record 2,
// which a real SQS server's event carries and fauxqs never returns), both
// (record 3, two links), none (record 4). Without a client nothing nacks a
// failed record: its span has no nack delay, and there is no settle span.
func TestSpansOfALambdaBatch(t *testing.T) {
	tel := newTelemetry(t)
	b, err := os.ReadFile("../sqslambda/testdata/traced.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	url, err := sqslambda.QueueURL(ev.Records[0].EventSourceARN)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := otelsqsloop.New(otelsqsloop.Config{QueueURL: url, TracerProvider: tel.tp, MeterProvider: tel.mp})
	if err != nil {
		t.Fatal(err)
	}
	tracer := tel.tp.Tracer("test")
	h, err := sqslambda.New(func(ctx context.Context, m *sqsloop.Message) error {
		_, work := tracer.Start(ctx, "work")
		defer work.End()
		return failOrPanic(m)
	}, sqslambda.Config{Logger: quiet, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ctx, invocation := tracer.Start(ctx, "jobs invoke", trace.WithSpanKind(trace.SpanKindServer))
	resp, err := h.Handle(ctx, ev)
	invocation.End()
	if err != nil || len(resp.BatchItemFailures) != 2 {
		t.Fatalf("response %+v, %v: want records 2 and 3 failed", resp, err)
	}

	procs := tel.named("process jobs")
	if len(procs) != 4 {
		t.Fatalf("%d process spans, want one per record (4)", len(procs))
	}
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range procs {
		checkProcessSpan(t, s, url)
		byID[str(s, "messaging.message.id")] = s
		if s.Parent().SpanID() != invocation.SpanContext().SpanID() {
			t.Errorf("process span of %s is not a child of the invocation's span", str(s, "messaging.message.id"))
		}
	}
	xray := func(h string) trace.SpanContext {
		sc, ok := otelsqsloop.ParseAWSTraceHeader(h)
		if !ok {
			t.Fatalf("fixture: bad AWSTraceHeader %q", h)
		}
		return sc
	}
	w3c := func(tp string) trace.SpanContext { // 00-trace-span-01
		p := strings.Split(tp, "-")
		tid, _ := trace.TraceIDFromHex(p[1])
		sid, _ := trace.SpanIDFromHex(p[2])
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
	}
	r := ev.Records
	for i, c := range []struct {
		outcome, receiveCount string
		links                 []trace.SpanContext
	}{
		{"acked", "1", []trace.SpanContext{w3c(*r[0].MessageAttributes["traceparent"].StringValue)}},
		{"nacked", "2", []trace.SpanContext{xray(r[1].Attributes["AWSTraceHeader"])}},
		{"panicked", "1", []trace.SpanContext{w3c(*r[2].MessageAttributes["traceparent"].StringValue), xray(r[2].Attributes["AWSTraceHeader"])}},
		{"acked", "1", nil},
	} {
		s := byID[r[i].MessageId]
		if s == nil {
			t.Errorf("record %d: no process span", i+1)
			continue
		}
		if got := str(s, "sqsloop.outcome"); got != c.outcome {
			t.Errorf("record %d: outcome %q, want %q", i+1, got, c.outcome)
		}
		if got := str(s, "sqsloop.receive_count"); got != c.receiveCount {
			t.Errorf("record %d: receive count %s, want %s", i+1, got, c.receiveCount)
		}
		if _, ok := attr(s, "sqsloop.nack_delay"); ok {
			t.Errorf("record %d: a nack delay without a client, which nothing applies", i+1)
		}
		var got []string
		for _, l := range s.Links() {
			got = append(got, l.SpanContext.TraceID().String()+"/"+l.SpanContext.SpanID().String())
		}
		var want []string
		for _, sc := range c.links {
			want = append(want, sc.TraceID().String()+"/"+sc.SpanID().String())
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("record %d: links %v, want %v", i+1, got, want)
		}
	}
	if got := str(byID[r[2].MessageId], "error.type"); got != "panic" {
		t.Errorf("panicked record's error.type %q, want panic", got)
	}
	for _, w := range tel.named("work") {
		if p := tel.spanByID(w.Parent().SpanID()); p == nil || p.Name() != "process jobs" {
			t.Errorf("a handler's span is not a child of its process span")
		}
	}
	for _, name := range []string{"receive jobs", "delete jobs", "change_visibility jobs"} {
		if n := len(tel.named(name)); n != 0 {
			t.Errorf("%d %q spans, want none: the event source mapping receives and deletes, and no client is set", n, name)
		}
	}
	ms := tel.metrics(t)
	if n := total(t, ms["messaging.process.duration"]); n != 4 {
		t.Errorf("messaging.process.duration counts %d runs, want 4", n)
	}
	if n := total(t, ms["messaging.process.duration"], attribute.String("sqsloop.outcome", "acked")); n != 2 {
		t.Errorf("%d acked runs, want 2", n)
	}
}

// With an SQS client (memmailbox, in virtual time) the lease owner of the
// invocation reports through the same Observer: the record that beats for
// 6 s on a 2 s visibility timeout is extended ("change_visibility jobs",
// kind extend), the failed one is nacked with its back-off (kind nack, its
// process span carrying the delay), and nothing is deleted by the function
// (no "delete jobs" span: the event source mapping deletes). The producer's
// traceparent, sent through the queue, and the AWSTraceHeader the event
// carries are the links of the two process spans.
func TestSpansOfALambdaBatchWithAClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tel := newTelemetry(t)
		obs := tel.observer(t, "jobs")
		broker := new(memmailbox.Broker)
		t.Cleanup(func() { broker.Close() })
		q, err := broker.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		tracer := tel.tp.Tracer("test")
		pctx, send := tracer.Start(t.Context(), "send jobs", trace.WithSpanKind(trace.SpanKindProducer))
		long := sqsloop.OutgoingMessage{Body: "long"}
		obs.InjectMessage(pctx, &long)
		send.End()
		if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{long, {Body: "fail"}}); err != nil {
			t.Fatal(err)
		}
		msgs, err := q.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 2, VisibilityTimeout: 2 * time.Second})
		if err != nil || len(msgs) != 2 {
			t.Fatalf("received %d, %v", len(msgs), err)
		}
		const xrayHeader = "Root=1-67891233-abcdef012345678912345678;Parent=463ac35c9f6413ad;Sampled=1"
		ev := lambdaEvent(msgs)
		for i := range ev.Records {
			if ev.Records[i].Body == "fail" {
				ev.Records[i].Attributes[sqsloop.AttrAWSTraceHeader] = xrayHeader
			}
		}
		h, err := sqslambda.New(func(ctx context.Context, m *sqsloop.Message) error {
			if m.Body == "long" {
				for range 12 {
					heartbeat.Beat(ctx)
					time.Sleep(500 * time.Millisecond)
				}
			}
			return failOrPanic(m)
		}, sqslambda.Config{
			Logger: quiet, Observer: obs, Backoff: func(int) time.Duration { return time.Hour },
			OpenQueue: func(string) (sqslambda.Queue, error) { return q, nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		resp, err := h.Handle(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) != 1 {
			t.Fatalf("response %+v, %v: want the failed record", resp, err)
		}

		procs := tel.named("process jobs")
		if len(procs) != 2 {
			t.Fatalf("%d process spans, want 2", len(procs))
		}
		wantXray, _ := otelsqsloop.ParseAWSTraceHeader(xrayHeader)
		for _, s := range procs {
			checkProcessSpan(t, s, "https://sqs.us-east-1.amazonaws.com/123456789012/jobs")
			var link trace.SpanContext
			if len(s.Links()) == 1 {
				link = s.Links()[0].SpanContext
			}
			switch out := str(s, "sqsloop.outcome"); out {
			case "acked":
				if link.SpanID() != send.SpanContext().SpanID() || link.TraceID() != send.SpanContext().TraceID() {
					t.Errorf("the long record's links %+v, want the producer's span %v", s.Links(), send.SpanContext())
				}
			case "nacked":
				if link.SpanID() != wantXray.SpanID() || link.TraceID() != wantXray.TraceID() {
					t.Errorf("the failed record's links %+v, want its AWSTraceHeader's %v", s.Links(), wantXray)
				}
				if v, _ := attr(s, "sqsloop.nack_delay"); v.AsFloat64() != 3600 {
					t.Errorf("the failed record's nack delay %v, want 3600 s", v.AsFloat64())
				}
			default:
				t.Errorf("outcome %q, want acked and nacked", out)
			}
		}
		kinds := map[string]int{}
		for _, s := range tel.named("change_visibility jobs") {
			if s.SpanKind() != trace.SpanKindClient || str(s, "messaging.operation.type") != "settle" {
				t.Errorf("settle span kind %v type %q", s.SpanKind(), str(s, "messaging.operation.type"))
			}
			kinds[str(s, "aws.sqs.settle.kind")]++
		}
		t.Logf("change_visibility spans by kind: %v", kinds)
		if kinds["extend"] < 2 || kinds["nack"] != 1 {
			t.Errorf("change_visibility spans by kind %v: want the long record's extensions (≥ 2) and one nack", kinds)
		}
		if n := len(tel.named("delete jobs")); n != 0 {
			t.Errorf("%d delete spans: the function deletes nothing", n)
		}
		ms := tel.metrics(t)
		if n := total(t, ms["sqsloop.lease.extensions"]); n < 2 {
			t.Errorf("sqsloop.lease.extensions %d, want ≥ 2", n)
		}
		if n := total(t, ms["sqsloop.settled.messages"], attribute.String("aws.sqs.settle.kind", "nack")); n != 1 {
			t.Errorf("sqsloop.settled.messages{nack} %d, want 1", n)
		}
	})
}

// checkProcessSpan checks what every process span has, for a consumer and
// on Lambda alike: kind CONSUMER and the messaging conventions' attributes
// of queue "jobs" at url.
func checkProcessSpan(t *testing.T, s sdktrace.ReadOnlySpan, url string) {
	t.Helper()
	if s.SpanKind() != trace.SpanKindConsumer {
		t.Errorf("process span kind %v, want CONSUMER", s.SpanKind())
	}
	for key, want := range map[string]string{"messaging.system": "aws_sqs", "messaging.destination.name": "jobs",
		"messaging.operation.name": "process", "messaging.operation.type": "process", "aws.sqs.queue.url": url} {
		if got := str(s, key); got != want {
			t.Errorf("process span %s = %q, want %q", key, got, want)
		}
	}
}

// failOrPanic is a handler's end: a body starting with "fail" fails, one
// starting with "panic" panics.
func failOrPanic(m *sqsloop.Message) error {
	switch {
	case strings.HasPrefix(m.Body, "fail"):
		return errors.New(m.Body)
	case strings.HasPrefix(m.Body, "panic"):
		panic(m.Body)
	}
	return nil
}

// lambdaEvent is msgs, received from queue "jobs", as the event Lambda
// hands a function.
func lambdaEvent(msgs []*sqsloop.Message) events.SQSEvent {
	var ev events.SQSEvent
	for _, m := range msgs {
		r := events.SQSMessage{MessageId: m.ID, ReceiptHandle: m.ReceiptHandle, Body: m.Body, Attributes: maps.Clone(m.Attributes),
			EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:jobs", AWSRegion: "us-east-1"}
		r.Attributes[sqsloop.AttrApproximateReceiveCount] = strconv.Itoa(m.ReceiveCount)
		for name, a := range m.MessageAttributes {
			if r.MessageAttributes == nil {
				r.MessageAttributes = map[string]events.SQSMessageAttribute{}
			}
			r.MessageAttributes[name] = events.SQSMessageAttribute{DataType: a.DataType, StringValue: &a.StringValue}
		}
		ev.Records = append(ev.Records, r)
	}
	return ev
}
