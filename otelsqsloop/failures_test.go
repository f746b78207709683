package otelsqsloop_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sqsloop/sqsloop"
)

// classedError names its class itself, as a lost lease's error does.
type classedError struct{ error }

func (classedError) ErrorType() string { return "lease_lost" }

func (e classedError) Unwrap() error { return e.error }

// A failed receive is a receive span with error.type and an error status,
// and counts in sqsloop.receive.errors by error.type, which is the class
// the error names itself, else the SQS error code an SDK error carries
// (smithy.APIError, ahead of the sentinel sqsmailbox wraps it in), else the
// sentinel it wraps ("timeout" for a deadline, "canceled"), else _OTHER:
// never a Go type such as *errors.errorString.
func TestReceiveErrorsByErrorType(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer(t, "jobs")
	apiErr := &smithy.GenericAPIError{Code: "AWS.SimpleQueueService.NonExistentQueue", Message: "The specified queue does not exist."}
	cases := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("sqsmailbox: receive: %w: %w", sqsloop.ErrQueueNotFound, apiErr), "AWS.SimpleQueueService.NonExistentQueue"},
		{classedError{fmt.Errorf("lost: %w", sqsloop.ErrReceiptHandleExpired)}, "lease_lost"},
		{fmt.Errorf("delete: %w", sqsloop.ErrReceiptHandleExpired), "receipt_handle_expired"},
		{fmt.Errorf("receive: %w", sqsloop.ErrAccessDenied), "access_denied"},
		{sqsloop.ErrQueueNotFound, "queue_not_found"},
		{fmt.Errorf("extend: %w", sqsloop.ErrLeaseCeiling), "lease_ceiling"},
		{sqsloop.ErrMailboxClosed, "mailbox_closed"},
		{fmt.Errorf("MaxMessages: %w", sqsloop.ErrInvalidArgument), "invalid_argument"},
		{fmt.Errorf("receive: %w", context.DeadlineExceeded), "timeout"},
		{fmt.Errorf("receive: %w", context.Canceled), "canceled"},
		{errors.New("boom"), "_OTHER"},
		{fmt.Errorf("receive: %w", errors.New("boom")), "_OTHER"},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, "_OTHER"},
	}
	for _, c := range cases {
		obs.Received(context.Background(), sqsloop.ReceiveEvent{Start: time.Now(), Duration: time.Millisecond, MaxMessages: 10, Err: c.err})
	}
	spans := tel.named("receive jobs")
	if len(spans) != len(cases) {
		t.Fatalf("%d receive spans, want %d", len(spans), len(cases))
	}
	ms := tel.metrics(t)
	if n := total(t, ms["sqsloop.receive.errors"]); n != int64(len(cases)) {
		t.Errorf("sqsloop.receive.errors %d, want %d", n, len(cases))
	}
	want := map[string]int64{}
	for i, c := range cases {
		s := spans[i]
		if got := str(s, "error.type"); got != c.want || s.Status().Code != codes.Error {
			t.Errorf("receive failing with %v: span error.type %q, status %v; want %q, Error", c.err, got, s.Status().Code, c.want)
		}
		want[c.want]++
	}
	for errType, n := range want {
		if got := total(t, ms["sqsloop.receive.errors"], attribute.String("error.type", errType)); got != n {
			t.Errorf("sqsloop.receive.errors{error.type=%q} = %d, want %d", errType, got, n)
		}
		if got := total(t, ms["messaging.client.operation.duration"], attribute.String("messaging.operation.name", "receive"), attribute.String("error.type", errType)); got != n {
			t.Errorf("messaging.client.operation.duration{receive, error.type=%q} = %d, want %d", errType, got, n)
		}
	}
}

// A batch call some of whose entries failed: its span has
// aws.sqs.batch.failed_count, the first failure's error.type and an error
// status; sqsloop.settled.messages and sqsloop.lease.extensions carry
// error.type on the failed entries only; a late extension counts in
// sqsloop.lease.late_extensions, an extension on time does not.
func TestFailedSettleEntries(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer(t, "jobs")
	invalid := &smithy.GenericAPIError{Code: "InvalidParameterValue", Message: "Value for parameter VisibilityTimeout is invalid."}
	ms := []*sqsloop.Message{{ID: "m1"}, {ID: "m2"}, {ID: "m3"}, {ID: "m4"}}
	obs.Settled(sqsloop.SettleEvent{Op: sqsloop.OpChangeVisibility, Start: time.Now(), Duration: 3 * time.Millisecond, Failed: 2, Held: 4,
		Entries: []sqsloop.SettleEntry{
			{Message: ms[0], Kind: sqsloop.KindExtend, Timeout: time.Minute, Late: true, Left: time.Second},
			{Message: ms[1], Kind: sqsloop.KindExtend, Timeout: time.Minute, Err: fmt.Errorf("extend: %w", sqsloop.ErrReceiptHandleExpired)},
			{Message: ms[2], Kind: sqsloop.KindNack, Timeout: time.Minute, Err: fmt.Errorf("nack: %w: %w", sqsloop.ErrInvalidArgument, invalid)},
			{Message: ms[3], Kind: sqsloop.KindExtend, Timeout: time.Minute, Left: 50 * time.Second},
		}})
	spans := tel.named("change_visibility jobs")
	if len(spans) != 1 {
		t.Fatalf("%d change_visibility spans, want 1", len(spans))
	}
	s := spans[0]
	if v, _ := attr(s, "aws.sqs.batch.failed_count"); v.AsInt64() != 2 {
		t.Errorf("aws.sqs.batch.failed_count %v, want 2", v.Emit())
	}
	if got := str(s, "error.type"); got != "receipt_handle_expired" || s.Status().Code != codes.Error {
		t.Errorf("span error.type %q, status %v; want the first failure's, receipt_handle_expired, and Error", got, s.Status().Code)
	}
	if v, _ := attr(s, "aws.sqs.visibility_timeout"); v.AsInt64() != 60 {
		t.Errorf("aws.sqs.visibility_timeout %v, want 60", v.Emit())
	}
	m := tel.metrics(t)
	extend, nack := attribute.String("aws.sqs.settle.kind", "extend"), attribute.String("aws.sqs.settle.kind", "nack")
	expired, code := attribute.String("error.type", "receipt_handle_expired"), attribute.String("error.type", "InvalidParameterValue")
	for _, c := range []struct {
		metric string
		with   []attribute.KeyValue
		want   int64
	}{
		{"sqsloop.settled.messages", nil, 4},
		{"sqsloop.settled.messages", []attribute.KeyValue{extend}, 3},
		{"sqsloop.settled.messages", []attribute.KeyValue{extend, expired}, 1},
		{"sqsloop.settled.messages", []attribute.KeyValue{nack, code}, 1},
		{"sqsloop.lease.extensions", nil, 3},
		{"sqsloop.lease.extensions", []attribute.KeyValue{expired}, 1},
		{"sqsloop.lease.late_extensions", nil, 1},
		{"messaging.client.operation.duration", []attribute.KeyValue{attribute.String("messaging.operation.name", "change_visibility")}, 1},
	} {
		if n := total(t, m[c.metric], c.with...); n != c.want {
			t.Errorf("%s%v = %d, want %d", c.metric, c.with, n, c.want)
		}
	}
	if n := errorTyped(t, m["sqsloop.settled.messages"]); n != 2 {
		t.Errorf("%d settled entries with an error.type, want the 2 failed", n)
	}
	if n := errorTyped(t, m["messaging.client.operation.duration"]); n != 0 {
		t.Errorf("%d calls with an error.type, want none: the call itself answered", n)
	}
}

// A batch call that failed as a whole (SettleEvent.Err, every entry failed
// with it): the call's duration carries its error.type, as does each entry.
func TestFailedSettleCall(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer(t, "jobs")
	err := fmt.Errorf("delete batch: %w", context.DeadlineExceeded)
	obs.Settled(sqsloop.SettleEvent{Op: sqsloop.OpDelete, Start: time.Now(), Duration: time.Second, Failed: 2, Err: err,
		Entries: []sqsloop.SettleEntry{{Message: &sqsloop.Message{ID: "m1"}, Kind: sqsloop.KindAck, Err: err}, {Message: &sqsloop.Message{ID: "m2"}, Kind: sqsloop.KindAck, Err: err}}})
	spans := tel.named("delete jobs")
	if len(spans) != 1 || str(spans[0], "error.type") != "timeout" || str(spans[0], "aws.sqs.batch.failed_count") != "2" {
		t.Fatalf("delete spans %v, want one with error.type timeout and 2 failed", spans)
	}
	timeout := attribute.String("error.type", "timeout")
	m := tel.metrics(t)
	if n := total(t, m["messaging.client.operation.duration"], attribute.String("messaging.operation.name", "delete"), timeout); n != 1 {
		t.Errorf("messaging.client.operation.duration{delete, timeout} = %d, want 1", n)
	}
	if n := total(t, m["sqsloop.settled.messages"], attribute.String("aws.sqs.settle.kind", "ack"), timeout); n != 2 {
		t.Errorf("sqsloop.settled.messages{ack, timeout} = %d, want 2", n)
	}
}

// errorTyped sums a counter's values, or a histogram's counts, over the
// data points that carry an error.type.
func errorTyped(t *testing.T, m metricdata.Metrics) int64 {
	t.Helper()
	var n int64
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if p.Attributes.HasValue("error.type") {
				n += p.Value
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if p.Attributes.HasValue("error.type") {
				n += int64(p.Count)
			}
		}
	default:
		t.Fatalf("metric %s: unexpected data %T", m.Name, m.Data)
	}
	return n
}

// A handler's error: the process span and messaging.process.duration carry
// a bounded error.type: "permanent" for sqsloop.Permanent (even around an
// error with an SQS code), "panic" for a panic, "timeout" for a deadline,
// the class the error names itself, and _OTHER for the rest, never the Go
// type of an errors.New.
func TestProcessErrorType(t *testing.T) {
	tel := newTelemetry(t)
	obs := tel.observer(t, "jobs")
	apiErr := &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}
	cases := []struct {
		outcome string
		err     error
		want    string
	}{
		{sqsloop.OutcomeNacked, errors.New("boom"), "_OTHER"},
		{sqsloop.OutcomeNacked, fmt.Errorf("charge card: %w", errors.New("declined")), "_OTHER"},
		{sqsloop.OutcomeDeadLettered, sqsloop.Permanent(errors.New("no such image")), "permanent"},
		{sqsloop.OutcomeNacked, sqsloop.Permanent(fmt.Errorf("put item: %w", apiErr)), "permanent"},
		{sqsloop.OutcomeNacked, fmt.Errorf("put item: %w", apiErr), "ProvisionedThroughputExceededException"},
		{sqsloop.OutcomePanicked, errors.New("consumer: handler panicked: oops"), "panic"},
		{sqsloop.OutcomeNacked, fmt.Errorf("fetch: %w", context.DeadlineExceeded), "timeout"},
		{sqsloop.OutcomeNacked, classedError{errors.New("quota")}, "lease_lost"},
	}
	for i, c := range cases {
		m := &sqsloop.Message{ID: fmt.Sprint("m", i), ReceiveCount: 1}
		obs.ProcessEnd(obs.ProcessStart(context.Background(), m), m, sqsloop.ProcessEvent{Outcome: c.outcome, Err: c.err, Duration: time.Millisecond})
	}
	spans := tel.named("process jobs")
	if len(spans) != len(cases) {
		t.Fatalf("%d process spans, want %d", len(spans), len(cases))
	}
	ms := tel.metrics(t)
	want := map[string]int64{}
	for i, c := range cases {
		if got := str(spans[i], "error.type"); got != c.want {
			t.Errorf("handler failing with %v: span error.type %q, want %q", c.err, got, c.want)
		}
		want[c.want]++
	}
	for errType, n := range want {
		if got := total(t, ms["messaging.process.duration"], attribute.String("error.type", errType)); got != n {
			t.Errorf("messaging.process.duration{error.type=%q} = %d, want %d", errType, got, n)
		}
	}
}
