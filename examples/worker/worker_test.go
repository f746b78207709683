package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// -send to a queue that does not exist fails before consuming: the worker
// says why and prints no summary (which would claim "-queue-url without
// -send").
func TestSendToAMissingQueue(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`)
	}))
	defer srv.Close()
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	o := options{Options: worker.Options{Dir: t.TempDir()}, sqs: worker.SQS{Endpoint: srv.URL, QueueURL: srv.URL + "/000000000000/nope", Send: true}}
	sum, err := o.run(context.Background(), &lifecycle.LoopGroup{Signals: []os.Signal{}}, &out, log)
	if !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("run = %v, want ErrQueueNotFound", err)
	}
	if sum.Ran {
		t.Errorf("the summary would print after a failed start:\n%s", out.String())
	}
}

// The flags of the database and OpenTelemetry programs fail at once, with
// one line naming the program to run, however they are written; the
// worker's own flags parse, and a flag no program has gets the flag
// package's usual message and the usage.
func TestFlagsOfOtherPrograms(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the one line on stderr
	}{
		{[]string{"-mailbox", "sqlite:jobs.db"}, "worker: -mailbox: the jobs in a database are a program of their own: go run ./examples/sqlworker -mailbox sqlite:jobs.db\n"},
		{[]string{"-concurrency", "4", "--mailbox=postgres://u@h/db"}, "go run ./examples/sqlworker"},
		{[]string{"-trace", "stdout"}, "worker: -trace: OpenTelemetry spans and metrics are a program of their own: go run ./examples/otelworker -trace stdout"},
		{[]string{"-trace=stdout", "-mailbox", "x"}, "go run ./examples/otelworker"},
	} {
		var stderr strings.Builder
		_, err := parse(tc.args, &stderr)
		if !errors.Is(err, errMoved) || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("parse(%q) = %v, stderr %q; want errMoved and the one line %q", tc.args, err, stderr.String(), tc.want)
		}
	}
	var stderr strings.Builder
	o, err := parse([]string{"-endpoint", "http://127.0.0.1:4566", "-metrics-addr", "127.0.0.1:9464", "-concurrency", "4"}, &stderr)
	if err != nil || o.sqs.Endpoint != "http://127.0.0.1:4566" || o.MetricsAddr != "127.0.0.1:9464" || o.Concurrency != 4 || o.Chunks != 48 || stderr.Len() != 0 {
		t.Errorf("parse = %+v, %v, stderr %q", o, err, stderr.String())
	}
	stderr.Reset()
	if _, err := parse([]string{"-nope"}, &stderr); err == nil || errors.Is(err, errMoved) || !strings.Contains(stderr.String(), "flag provided but not defined: -nope") || !strings.Contains(stderr.String(), "-queue-url") {
		t.Errorf("parse(-nope) = %v, stderr %q; want the flag package's message and the usage", err, stderr.String())
	}
	stderr.Reset()
	if _, err := parse([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), "-mailbox") {
		t.Errorf("parse(-h) = %v, stderr %q; want ErrHelp and the usage", err, stderr.String())
	}
}
