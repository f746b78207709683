package otelsqsloop

import (
	"context"
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/sqsloop/sqsloop"
)

// appendLinks appends to links those to m's creation contexts: the one
// its message attributes carry (traceparent) and the one its
// AWSTraceHeader carries, when present and valid, the second only when it
// differs.
func (o *Observer) appendLinks(links []trace.Link, m *sqsloop.Message) []trace.Link {
	w3c := o.extract(m)
	if w3c.IsValid() {
		links = append(links, trace.Link{SpanContext: w3c})
	}
	if xray, ok := ParseAWSTraceHeader(m.Attributes[sqsloop.AttrAWSTraceHeader]); ok && !xray.Equal(w3c) {
		links = append(links, trace.Link{SpanContext: xray})
	}
	return links
}

// extract returns the span context m's message attributes carry, read
// with the Observer's propagator: none, without a call, when m has none of
// the attributes the propagator reads.
func (o *Observer) extract(m *sqsloop.Message) trace.SpanContext {
	carries := len(o.fields) == 0 // a propagator that does not say
	for _, f := range o.fields {
		_, ok := m.MessageAttributes[f]
		carries = carries || ok
	}
	if !carries {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(o.prop.Extract(context.Background(), attributeCarrier(m.MessageAttributes)))
}

// Extract returns ctx carrying m's creation context as its remote span
// context: the traceparent message attribute's (read with the Observer's
// propagator) if valid, else the AWSTraceHeader system attribute's; ctx
// unchanged when m carries neither. For a handler that wants the
// producer's trace as its parent rather than as a link.
func (o *Observer) Extract(ctx context.Context, m *sqsloop.Message) context.Context {
	if sc := o.extract(m); sc.IsValid() {
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	if sc, ok := ParseAWSTraceHeader(m.Attributes[sqsloop.AttrAWSTraceHeader]); ok {
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return ctx
}

// InjectMessage writes the span context of ctx into m's message attributes
// (traceparent, and tracestate when there is one) with the Observer's
// propagator: the creation context a consumer links its process span to.
// Its shape, func(ctx, *sqsloop.OutgoingMessage), is a producer's
// instrumentation hook. It leaves m alone when ctx carries no valid span
// context, when m already carries a traceparent (a creation context the
// sender chose stays, as the conventions ask), and when the attributes
// would exceed SQS's 10 per message (sqsloop.MaxMessageAttributes). Safe
// for concurrent use on different messages.
func (o *Observer) InjectMessage(ctx context.Context, m *sqsloop.OutgoingMessage) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	if _, ok := m.MessageAttributes["traceparent"]; ok {
		return
	}
	var c propagation.MapCarrier = map[string]string{}
	o.prop.Inject(ctx, c)
	if len(m.MessageAttributes)+len(c) > sqsloop.MaxMessageAttributes {
		return
	}
	if m.MessageAttributes == nil {
		m.MessageAttributes = make(map[string]sqsloop.MessageAttribute, len(c))
	}
	for k, v := range c {
		m.MessageAttributes[k] = sqsloop.MessageAttribute{DataType: "String", StringValue: v}
	}
}

// attributeCarrier reads a message's String attributes for a propagator.
type attributeCarrier map[string]sqsloop.MessageAttribute

func (c attributeCarrier) Get(key string) string {
	if a, ok := c[key]; ok && strings.HasPrefix(a.DataType, "String") {
		return a.StringValue
	}
	return ""
}

func (c attributeCarrier) Set(string, string) {} // read only

func (c attributeCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// ParseAWSTraceHeader reads an AWS X-Ray trace header (the AWSTraceHeader
// system attribute: "Root=1-5759e988-bd862e3fe1be46a994272793;
// Parent=53995c3f42cd8ad8;Sampled=1", fields in any order, others ignored)
// as a remote span context: the Root's 8 + 24 hex digits are the trace ID,
// Parent the span ID, Sampled=1 the sampled flag. ok is false when Root or
// Parent is missing or malformed.
func ParseAWSTraceHeader(h string) (sc trace.SpanContext, ok bool) {
	var tid trace.TraceID
	var sid trace.SpanID
	var root, parent bool
	var flags trace.TraceFlags
	for field := range strings.SplitSeq(h, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(field), "=")
		switch k {
		case "Root":
			ver, rest, ok1 := strings.Cut(v, "-")
			epoch, id, ok2 := strings.Cut(rest, "-")
			if !ok1 || !ok2 || ver != "1" || len(epoch) != 8 || len(id) != 24 {
				return trace.SpanContext{}, false
			}
			if _, err := hex.Decode(tid[:], []byte(epoch+id)); err != nil {
				return trace.SpanContext{}, false
			}
			root = true
		case "Parent":
			if len(v) != 16 {
				return trace.SpanContext{}, false
			}
			if _, err := hex.Decode(sid[:], []byte(v)); err != nil {
				return trace.SpanContext{}, false
			}
			parent = true
		case "Sampled":
			if v == "1" {
				flags = trace.FlagsSampled
			}
		}
	}
	if !root || !parent {
		return trace.SpanContext{}, false
	}
	sc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true})
	return sc, sc.IsValid()
}

// AWSTraceHeader formats sc as an AWS X-Ray trace header, for a sender
// that sets the AWSTraceHeader system attribute itself (SendMessage's
// MessageSystemAttributes; an sqsloop.OutgoingMessage carries no system
// attributes). It returns "" for an invalid sc.
func AWSTraceHeader(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	tid := sc.TraceID().String()
	sampled := "0"
	if sc.IsSampled() {
		sampled = "1"
	}
	return "Root=1-" + tid[:8] + "-" + tid[8:] + ";Parent=" + sc.SpanID().String() + ";Sampled=" + sampled
}
