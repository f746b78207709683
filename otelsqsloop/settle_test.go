package otelsqsloop_test

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/sqsloop/sqsloop"
)

// A settle span names every kind of entry its batch holds, a kind this
// package has no name of its own for too (one added to sqsloop's later),
// so that none is dropped silently.
func TestSettleSpanNamesEveryKind(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer(t, "jobs")
	later := "later"
	m1, m2, m3 := &sqsloop.Message{ID: "m1"}, &sqsloop.Message{ID: "m2"}, &sqsloop.Message{ID: "m3"}
	obs.Settled(sqsloop.SettleEvent{Op: sqsloop.OpChangeVisibility, Start: time.Now(), Entries: []sqsloop.SettleEntry{
		{Message: m1, Kind: later}, {Message: m2, Kind: sqsloop.KindNack}, {Message: m3, Kind: sqsloop.KindExtend},
	}})
	spans := tel.named("change_visibility jobs")
	if len(spans) != 1 {
		t.Fatalf("%d change_visibility spans, want 1", len(spans))
	}
	if got, want := str(spans[0], "aws.sqs.settle.kind"), "extend,nack,"+later; got != want {
		t.Errorf("aws.sqs.settle.kind %q, want %q", got, want)
	}
	if n := total(t, tel.metrics(t)["sqsloop.settled.messages"], attribute.String("aws.sqs.settle.kind", later)); n != 1 {
		t.Errorf("sqsloop.settled.messages of the later kind %d, want 1", n)
	}
}
