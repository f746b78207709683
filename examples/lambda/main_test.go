package main

import (
	"context"
	"io"
	"log/slog"
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
// that does not exist fails its record too.
func TestFunctionReportsFailingAndPanickingRecords(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat(name, 1000)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fn, err := newFunction(t.Context(), func(string) string { return "" }, quiet)
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
		rec("good-2", filepath.Join(dir, "b")), rec("missing-1", filepath.Join(dir, "missing")),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range resp.BatchItemFailures {
		got = append(got, f.ItemIdentifier)
	}
	if want := []string{"fail-1", "panic-1", "missing-1"}; !slices.Equal(got, want) {
		t.Errorf("batchItemFailures %v, want %v", got, want)
	}
}

func TestBadSettingsAreRefused(t *testing.T) {
	for _, env := range []map[string]string{{"SLOW": "fast"}, {"CHUNKS": "x"}, {"BACKOFF": "1"}, {"CONCURRENCY": "0x"}, {"LEASES": "yes"}} {
		if _, err := newFunction(t.Context(), func(k string) string { return env[k] }, quiet); err == nil {
			t.Errorf("%v: no error", env)
		}
	}
}
