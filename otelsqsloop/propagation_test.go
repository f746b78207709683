package otelsqsloop_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

// The X-Ray header of AWS's documentation reads as its trace and parent,
// and a span context survives formatting and parsing.
func TestAWSTraceHeader(t *testing.T) {
	sc, ok := otelsqsloop.ParseAWSTraceHeader("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	if !ok || sc.TraceID().String() != "5759e988bd862e3fe1be46a994272793" || sc.SpanID().String() != "53995c3f42cd8ad8" || !sc.IsSampled() || !sc.IsRemote() {
		t.Fatalf("parsed %v %v", sc, ok)
	}
	if got := otelsqsloop.AWSTraceHeader(sc); got != "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1" {
		t.Errorf("formatted %q", got)
	}
	for _, bad := range []string{"", "Root=1-5759e988-bd862e3fe1be46a994272793", "Parent=53995c3f42cd8ad8",
		"Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8", "Root=1-5759e988-zz862e3fe1be46a994272793;Parent=53995c3f42cd8ad8",
		"Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f"} {
		if _, ok := otelsqsloop.ParseAWSTraceHeader(bad); ok {
			t.Errorf("ParseAWSTraceHeader(%q) ok, want not", bad)
		}
	}
	if otelsqsloop.AWSTraceHeader(trace.SpanContext{}) != "" {
		t.Error("an invalid span context formats as a header")
	}
}

// A message carrying both a traceparent and a different AWSTraceHeader
// gets a process span with both links; Extract prefers the traceparent.
func TestProcessSpanLinksBothCreationContexts(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer(t, "jobs")
	ctx, producer := tel.tp.Tracer("test").Start(context.Background(), "send jobs")
	producer.End()
	var out sqsloop.OutgoingMessage
	obs.InjectMessage(ctx, &out)
	xray := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	m := &sqsloop.Message{ID: "m1", MessageAttributes: out.MessageAttributes, Attributes: map[string]string{sqsloop.AttrAWSTraceHeader: xray}}
	pctx := obs.ProcessStart(context.Background(), m)
	obs.ProcessEnd(pctx, m, sqsloop.ProcessEvent{Outcome: sqsloop.OutcomeAcked})
	spans := tel.named("process jobs")
	if len(spans) != 1 || len(spans[0].Links()) != 2 {
		t.Fatalf("spans %v, want one with two links", spans)
	}
	if l := spans[0].Links(); l[0].SpanContext.SpanID() != producer.SpanContext().SpanID() || l[1].SpanContext.TraceID().String() != "5759e988bd862e3fe1be46a994272793" {
		t.Errorf("links %+v", l)
	}
	if got := trace.SpanContextFromContext(obs.Extract(context.Background(), m)); got.SpanID() != producer.SpanContext().SpanID() {
		t.Errorf("Extract gave %v, want the traceparent's", got)
	}
	m.MessageAttributes = nil
	if got := trace.SpanContextFromContext(obs.Extract(context.Background(), m)); got.SpanID().String() != "53995c3f42cd8ad8" {
		t.Errorf("Extract without traceparent gave %v, want the AWSTraceHeader's", got)
	}
}

// InjectMessage keeps a creation context the sender set, writes nothing
// without a span, and never pushes a message past SQS's 10 attributes.
func TestInjectMessageRules(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer(t, "jobs")
	var none sqsloop.OutgoingMessage
	obs.InjectMessage(context.Background(), &none)
	if none.MessageAttributes != nil {
		t.Errorf("injected without a span: %v", none.MessageAttributes)
	}
	ctx, span := tel.tp.Tracer("test").Start(context.Background(), "send")
	defer span.End()
	own := sqsloop.OutgoingMessage{MessageAttributes: map[string]sqsloop.MessageAttribute{"traceparent": {DataType: "String", StringValue: "mine"}}}
	obs.InjectMessage(ctx, &own)
	if own.MessageAttributes["traceparent"].StringValue != "mine" {
		t.Errorf("the sender's traceparent was replaced")
	}
	full := sqsloop.OutgoingMessage{MessageAttributes: map[string]sqsloop.MessageAttribute{}}
	for i := range sqsloop.MaxMessageAttributes {
		full.MessageAttributes[fmt.Sprint("a", i)] = sqsloop.MessageAttribute{DataType: "String", StringValue: "v"}
	}
	obs.InjectMessage(ctx, &full)
	if len(full.MessageAttributes) != sqsloop.MaxMessageAttributes {
		t.Errorf("%d attributes after InjectMessage, want at most %d", len(full.MessageAttributes), sqsloop.MaxMessageAttributes)
	}
}

// New names the missing queue.
func TestNewNeedsAQueue(t *testing.T) {
	if _, err := otelsqsloop.New(otelsqsloop.Config{}); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("New without a queue: %v, want ErrInvalidArgument", err)
	}
	obs, err := otelsqsloop.New(otelsqsloop.Config{QueueURL: "http://127.0.0.1:4566/000000000000/orders"})
	if err != nil || obs == nil {
		t.Fatalf("New with a URL: %v", err)
	}
}
