// Command lambda is sqsloop's main job as an AWS Lambda function behind an
// SQS event source mapping: each record names a file, which the function
// hashes with SHA-256 through a reader that beats the heartbeat, exactly as
// examples/worker does under a consumer. A record whose body starts with
// "fail" always fails and one that starts with "panic" panics, so the
// partial batch response shows: the function answers with their message
// IDs in batchItemFailures, and the event source mapping (with
// ReportBatchItemFailures) deletes the others. One whose body starts with
// "poison" can never succeed (sqsloop.Permanent): with LEASES=on and a
// queue with a redrive policy it goes to the dead-letter queue on its
// first delivery and is not in batchItemFailures; otherwise it fails like
// the "fail" records.
//
// Build it as a custom runtime's bootstrap (provided.al2023):
//
//	GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -o bootstrap ./examples/lambda
//
// Or run it once, locally, on an event file (an SQS event as Lambda
// delivers it: event.json here, AWS's sample event, or one that sam local
// generate-event sqs receive-message prints), from the directory the
// bodies' file names are relative to; it prints the response (the
// batchItemFailures) on standard output and exits:
//
//	go run ./examples/lambda -event examples/lambda/event.json
//
// Flags: -event FILE runs the function once on FILE (sqslambda.Invoke),
// -timeout D is the function timeout it runs with (default 30s). Without
// -event it is a Lambda function (lambda.Start), which only runs inside
// Lambda or behind a Runtime API (AWS_LAMBDA_RUNTIME_API).
//
// Settings, from the environment:
//
//	LEASES=on      use an SQS client (needs sqs:ChangeMessageVisibility and
//	               sqs:GetQueueAttributes): records that beat stay hidden past
//	               the queue's visibility timeout, failed ones come back after
//	               the back-off, records not run are given back at once, and
//	               "poison" records go to the dead-letter queue (needs
//	               sqs:GetQueueUrl and sqs:SendMessage on it)
//	SQS_ENDPOINT   with LEASES=on, an SQS-compatible server's URL instead of AWS
//	BACKOFF        first retry delay of a failed record, doubling (default 1s)
//	SLOW, CHUNKS   pause after each of CHUNKS reads of a file (default 0, 48)
//	CONCURRENCY    records at once (default 10)
//	TRACE=stdout   print an OpenTelemetry span of every record run (and, with
//	               LEASES=on, of every batch call of the lease owner) on
//	               standard output, as JSON; needs QUEUE_URL, the URL of the
//	               queue, which the spans name
//
// After each invocation it logs one line with the response and the
// handler's counters.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqslambda"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

func main() {
	event := flag.String("event", "", "run the function once on this event file (JSON, an SQS event as Lambda delivers it), print the response, and exit")
	timeout := flag.Duration("timeout", 30*time.Second, "with -event: the function timeout")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	h, err := newFunction(context.Background(), os.Getenv, os.Stdout, log)
	if err != nil {
		log.Error("lambda example: bad settings", slog.Any("error", err))
		os.Exit(1)
	}
	if *event != "" {
		if err := invokeFile(context.Background(), h, *event, *timeout, os.Stdout); err != nil {
			log.Error("lambda example", slog.Any("error", err))
			os.Exit(1)
		}
		return
	}
	lambda.Start(h)
}

// invokeFile runs handle once on the event in the file at path, as Lambda
// would with the function timeout timeout, writes the response to out as
// JSON, and returns the function's error (sqslambda.ErrAllFailed when
// every record failed) or Invoke's.
func invokeFile(ctx context.Context, handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), path string, timeout time.Duration, out io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	ev, err := sqslambda.ReadEvent(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	resp, err := sqslambda.Invoke(ctx, handle, ev, timeout)
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if eerr := enc.Encode(resp); eerr != nil {
		return eerr
	}
	return err // the function's error, as Lambda would get it with the response
}

// newFunction returns the function's handler, configured from getenv; spans
// (TRACE=stdout) go to stdout.
func newFunction(ctx context.Context, getenv func(string) string, stdout io.Writer, log *slog.Logger) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	j := &job{log: log, chunks: 48}
	cfg := sqslambda.Config{Logger: log}
	backoff := time.Second
	for _, s := range []struct {
		name  string
		parse func(string) error
	}{
		{"SLOW", func(v string) (err error) { j.slow, err = time.ParseDuration(v); return err }},
		{"CHUNKS", func(v string) (err error) { j.chunks, err = strconv.Atoi(v); return err }},
		{"BACKOFF", func(v string) (err error) { backoff, err = time.ParseDuration(v); return err }},
		{"CONCURRENCY", func(v string) (err error) { cfg.Concurrency, err = strconv.Atoi(v); return err }},
	} {
		if v := getenv(s.name); v != "" {
			if err := s.parse(v); err != nil {
				return nil, fmt.Errorf("%s=%q: %w", s.name, v, err)
			}
		}
	}
	cfg.Backoff = sqsloop.ExponentialBackoff(backoff, 5*time.Minute)
	switch v := getenv("LEASES"); v {
	case "on":
		client, err := sqsmailbox.NewClient(ctx, getenv("SQS_ENDPOINT"))
		if err != nil {
			return nil, err
		}
		cfg.OpenQueue = func(queueURL string) (sqslambda.Queue, error) {
			return sqsmailbox.New(client, queueURL)
		}
	case "", "off":
	default:
		return nil, fmt.Errorf("LEASES=%q: want on or off", v)
	}
	switch v := getenv("TRACE"); v {
	case "stdout":
		obs, err := tracing(getenv("QUEUE_URL"), stdout)
		if err != nil {
			return nil, err
		}
		cfg.Observer = obs
	case "":
	default:
		return nil, fmt.Errorf("TRACE=%q: want stdout or nothing", v)
	}
	h, err := sqslambda.New(j.handle, cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, err := h.Handle(ctx, ev)
		st := h.Stats()
		log.Info("invocation", slog.Int("records", len(ev.Records)), slog.Int("failures", len(resp.BatchItemFailures)),
			slog.Int64("succeeded", st.Succeeded), slog.Int64("failed", st.Failed), slog.Int64("panics", st.Panics),
			slog.Int64("extensions", st.Extensions), slog.Int64("extension_calls", st.ExtensionCalls),
			slog.Int64("nacked", st.Nacked), slog.Int64("given_back", st.GivenBack), slog.Int64("leases_lost", st.LeasesLost),
			slog.Int64("poisoned", st.Poisoned))
		return resp, err
	}, nil
}
