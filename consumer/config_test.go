package consumer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

// Every invalid config returns an error that names the field.
func TestInvalidConfigNamesTheField(t *testing.T) {
	q := newQueue(t, sqsloop.QueueSpec{})
	noop := func(context.Context, *sqsloop.Message) error { return nil }
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Concurrency: -1}, "Concurrency:"},
		{Config{Concurrency: MaxConcurrency + 1}, "Concurrency:"},
		{Config{VisibilityTimeout: 500 * time.Millisecond}, "VisibilityTimeout:"},
		{Config{VisibilityTimeout: 13 * time.Hour}, "VisibilityTimeout:"},
		{Config{WaitTime: 21 * time.Second}, "WaitTime:"},
		{Config{WaitTime: -time.Second}, "WaitTime:"},
		{Config{ShutdownTimeout: -time.Second}, "ShutdownTimeout:"},
		{Config{LatencyTarget: -time.Second}, "LatencyTarget:"},
		{Config{Visibility: visibility.Config{MinExtensionPeriod: time.Minute, MaxExtensionPeriod: 30 * time.Second}}, "Visibility.MaxExtensionPeriod:"},
		{Config{VisibilityTimeout: 30 * time.Second, Visibility: visibility.Config{MinExtensionPeriod: 10 * time.Second}}, "Visibility.MinExtensionPeriod:"}, // ≤ 2 Intervals of 6 s
		{Config{Middleware: []sqsloop.Middleware{nil}}, "Middleware[0]:"},
		{Config{MessageAttributeNames: []string{"a", ""}}, "MessageAttributeNames[1]:"},
		{Config{Visibility: visibility.Config{Interval: -1}}, "Visibility.Interval:"},
		{Config{Visibility: visibility.Config{Extension: 13 * time.Hour}}, "Visibility.Extension:"},
		{Config{VisibilityTimeout: 90 * time.Second, Visibility: visibility.Config{Interval: time.Minute}}, "Visibility.Interval:"}, // 60 s ≥ 90 s/2
		{Config{VisibilityTimeout: 30 * time.Second, Visibility: visibility.Config{MaxExtension: 10 * time.Second}}, "Visibility.MaxExtension:"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			_, err := New(q, noop, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("New(%+v) = %v, want an error naming %s", tc.cfg, err, tc.field)
			}
		})
	}
	if _, err := New(nil, nil, Config{}); err == nil || !errors.Is(err, sqsloop.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "mailbox:") || !strings.Contains(err.Error(), "handler:") {
		t.Fatalf("New(nil, nil) = %v", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
}

// Setting only VisibilityTimeout (SQS's default 30 s) is a valid config:
// Interval follows it, and the lease owner chooses the extension. Left
// zero, it is the queue's, read at start-up: nothing is derived before.
func TestVisibilityTimeoutAloneIsValid(t *testing.T) {
	cfg := Config{VisibilityTimeout: 30 * time.Second}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate = %v", err)
	}
	d := cfg.withDefaults()
	if d.Visibility.Extension != 0 || d.Visibility.Interval != 6*time.Second {
		t.Fatalf("Extension %v, Interval %v; want 0 (chosen) and 6s", d.Visibility.Extension, d.Visibility.Interval)
	}
	if d := (Config{}).withDefaults(); d.VisibilityTimeout != 0 || d.Visibility.Interval != 0 {
		t.Fatalf("defaults: VisibilityTimeout %v, Interval %v; want both 0 until Run reads the queue's", d.VisibilityTimeout, d.Visibility.Interval)
	}
}
