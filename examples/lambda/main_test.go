package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// The function answers a batch of two files, a failing and a panicking
// record with exactly the failing and the panicking message IDs; a file
// that does not exist fails its record too, and so does a poison record
// without an SQS client (nothing can send it to a dead-letter queue).
func TestFunctionReportsFailingAndPanickingRecords(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat(name, 1000)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fn, err := newFunction(t.Context(), func(string) string { return "" }, io.Discard, quiet)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(id, body string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, Body: body, Attributes: map[string]string{"ApproximateReceiveCount": "1"},
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:jobs"}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	resp, err := fn(ctx, events.SQSEvent{Records: []events.SQSMessage{
		rec("good-1", filepath.Join(dir, "a")), rec("fail-1", "fail: always"), rec("panic-1", "panic: always"),
		rec("good-2", filepath.Join(dir, "b")), rec("missing-1", filepath.Join(dir, "missing")), rec("poison-1", "poison: never"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range resp.BatchItemFailures {
		got = append(got, f.ItemIdentifier)
	}
	if want := []string{"fail-1", "panic-1", "missing-1", "poison-1"}; !slices.Equal(got, want) {
		t.Errorf("batchItemFailures %v, want %v", got, want)
	}
}

func TestBadSettingsAreRefused(t *testing.T) {
	for _, env := range []map[string]string{{"SLOW": "fast"}, {"CHUNKS": "x"}, {"BACKOFF": "1"}, {"CONCURRENCY": "0x"}, {"LEASES": "yes"},
		{"TRACE": "otlp", "QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"}, {"TRACE": "stdout"}} {
		if _, err := newFunction(t.Context(), func(k string) string { return env[k] }, io.Discard, quiet); err == nil {
			t.Errorf("%v: no error", env)
		}
	}
}

// TRACE=stdout prints a process span per record on the writer given as
// standard output, as JSON: named for QUEUE_URL's queue, with its outcome,
// and linked to the producer's context of a record that carries a
// traceparent.
func TestTraceStdoutPrintsASpanPerRecord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a")
	if err := os.WriteFile(file, []byte("some bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TRACE": "stdout", "QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"}
	var out bytes.Buffer
	fn, err := newFunction(t.Context(), func(k string) string { return env[k] }, &out, quiet)
	if err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	tp := "00-" + traceID + "-00f067aa0ba902b7-01"
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := fn(ctx, events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "good-1", Body: file, Attributes: map[string]string{"ApproximateReceiveCount": "1"},
			MessageAttributes: map[string]events.SQSMessageAttribute{"traceparent": {DataType: "String", StringValue: &tp}},
			EventSourceARN:    "arn:aws:sqs:us-east-1:123456789012:jobs"},
		{MessageId: "fail-1", Body: "fail: always", Attributes: map[string]string{"ApproximateReceiveCount": "1"},
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:jobs"},
	}}); err != nil {
		t.Fatal(err)
	}
	type span struct {
		Name       string
		Attributes []struct {
			Key   string
			Value struct{ Value any }
		}
		Links []struct{ SpanContext struct{ TraceID string } }
	}
	got := map[string]string{} // message ID: outcome and link
	dec := json.NewDecoder(&out)
	for dec.More() {
		var s span
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("stdout: %v", err)
		}
		attrs := map[string]any{}
		for _, a := range s.Attributes {
			attrs[a.Key] = a.Value.Value
		}
		link := "no link"
		if len(s.Links) == 1 {
			link = s.Links[0].SpanContext.TraceID
		}
		if s.Name == "process jobs" {
			got[fmt.Sprint(attrs["messaging.message.id"])] = fmt.Sprint(attrs["sqsloop.outcome"], " ", link)
		}
	}
	want := map[string]string{"good-1": "acked " + traceID, "fail-1": "nacked no link"}
	if !maps.Equal(got, want) {
		t.Errorf("process spans printed %v, want %v", got, want)
	}
}

// -event runs the function once on an event file, as Lambda would, and
// prints the response: the README's local run, `go run ./examples/lambda
// -event examples/lambda/event.json` from the repository root (without
// it the program is a Lambda function, which fails outside Lambda). The
// event is AWS's sample's shape, receive times of 2018 included.
func TestEventFileRunsLocally(t *testing.T) {
	t.Chdir(filepath.Join("..", "..")) // the bodies name go.mod and go.sum
	fn, err := newFunction(t.Context(), func(string) string { return "" }, io.Discard, quiet)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := invokeFile(t.Context(), fn, filepath.Join("examples", "lambda", "event.json"), 30*time.Second, &out); err != nil {
		t.Fatal(err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var got []string
	for _, f := range resp.BatchItemFailures {
		got = append(got, f.ItemIdentifier)
	}
	if want := []string{"2e1424d4-f796-459a-8184-9c92662be6da", "6a1e2b6c-3c0d-4a3e-9d1a-5f0e8a7b9c21"}; !slices.Equal(got, want) {
		t.Errorf("batchItemFailures %v, want the failing and the panicking record %v", got, want)
	}
	if err := invokeFile(t.Context(), fn, "go.mod", time.Second, &out); err == nil {
		t.Error("a file that is not an event: no error")
	}
}
