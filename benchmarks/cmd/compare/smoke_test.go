package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/sqsloop/sqsloop/benchmarks/wire"
	"github.com/sqsloop/sqsloop/integration"
)

// smokeEnv returns the real server the benchmark uses (fauxqs, unless
// SQS_ENDPOINT names another), or skips; with CI=true (as .ci/run sets) no
// server is a failure, not a skip, as in the integration module's tests.
func smokeEnv(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs an SQS-compatible server")
	}
	e, err := newEnv(context.Background(), "../../../integration", t.Logf)
	if errors.Is(err, integration.ErrNoServer) && os.Getenv("CI") != "true" {
		t.Skipf("no server (set SQS_ENDPOINT, start Docker, or run `npm ci --prefix integration`; CI=true makes this a failure): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.close() })
	return e
}

// checkExactlyOnce checks what the table relies on: every message handled
// exactly once and deleted, and the wire count equal to the SDK's count.
func checkExactlyOnce(t *testing.T, r result, n int64) {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.countCheck != nil {
		t.Error(r.countCheck)
	}
	if r.distinct != n || r.duplicates != 0 || r.unknown != 0 {
		t.Errorf("distinct %d, duplicates %d, unknown %d; want %d, 0, 0", r.distinct, r.duplicates, r.unknown, n)
	}
	if r.left.total() != 0 {
		t.Errorf("left in the queue: %+v", r.left)
	}
	if r.requests[wire.ReceiveMessage] == 0 || r.requests[wire.DeleteMessage]+r.requests[wire.DeleteMessageBatch] == 0 {
		t.Errorf("requests %v: want receives and deletes counted", r.requests)
	}
	if r.maxReceiveCount != 1 {
		t.Errorf("largest receive count %d, want 1: every implementation asks for it, and nothing was received twice", r.maxReceiveCount)
	}
}

// TestEveryImplementationConsumesAll runs each implementation once on a
// small queue of the real server.
func TestEveryImplementationConsumesAll(t *testing.T) {
	e := smokeEnv(t)
	sc := scenario{name: "smoke", messages: 60, concurrency: 4,
		visibility: 30 * time.Second, interval: 10 * time.Second, extension: 30 * time.Second, timeout: time.Minute}
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			r := runOnce(context.Background(), e, sc, im, 1, options{logLevel: slog.LevelWarn})
			checkExactlyOnce(t, r, 60)
			if r.workers != nil {
				t.Errorf("worker stats %+v for one worker", *r.workers)
			}
		})
	}
}

// TestEveryImplementationAsTwoWorkers runs each implementation as two
// workers on one small queue of short jobs, as the two-workers scenario
// does (shorter), and checks the worker stats are there: every handler
// run counted on one worker, and every run's receive seen (runOnce fails
// the run otherwise).
func TestEveryImplementationAsTwoWorkers(t *testing.T) {
	e := smokeEnv(t)
	sc := scenario{name: "smoke-two", messages: 12, concurrency: 2, work: 100 * time.Millisecond, beatEvery: 50 * time.Millisecond,
		visibility: 30 * time.Second, interval: 10 * time.Second, extension: 30 * time.Second, timeout: time.Minute, workers: 2}
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			r := runOnce(context.Background(), e, sc, im, 1, options{logLevel: slog.LevelWarn})
			checkExactlyOnce(t, r, 12)
			w := r.workers
			if w == nil {
				t.Fatal("no worker stats")
			}
			if len(w.handled) != 2 || w.handled[0]+w.handled[1] != 12 {
				t.Errorf("handled by A/B %v, want 12 in all", w.handled)
			}
			if w.largestWait < 0 || w.totalWait < w.largestWait || w.waitedLong < 0 {
				t.Errorf("buffer waits %+v", *w)
			}
			t.Log(r.logLine())
		})
	}
}

// TestReceiveWaitTimes pins the long poll each implementation asks for on
// the wire, which the README's account of the peers rests on: gocloud at
// its defaults sends no WaitTimeSeconds (a short poll on these queues),
// gocloud-wait20 and the other two 20 s.
func TestReceiveWaitTimes(t *testing.T) {
	e := smokeEnv(t)
	sc := scenario{name: "wait", messages: 20, concurrency: 4,
		visibility: 30 * time.Second, interval: 10 * time.Second, extension: 30 * time.Second, timeout: time.Minute}
	want := map[string]int32{"sqsloop": 20, "naive": 20, "gocloud": 0, "gocloud-wait20": 20}
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			ctx := context.Background()
			url, err := createQueue(ctx, e.admin, queueName(sc.name, im.name), sc.visibility)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = deleteQueue(ctx, e.admin, url) })
			if err := preload(ctx, e.admin, url, sc.messages); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			waits := map[int32]int{}
			client, err := e.clientWith(ctx, nil, func(o *sqs.Options) {
				o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
					return s.Initialize.Add(middleware.InitializeMiddlewareFunc("compare.waits",
						func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
							if r, ok := in.Parameters.(*sqs.ReceiveMessageInput); ok {
								mu.Lock()
								waits[r.WaitTimeSeconds]++
								mu.Unlock()
							}
							return next.HandleInitialize(ctx, in)
						}), middleware.Before)
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			j := job{client: client, url: url, sc: sc, tr: newTracker(sc.messages), log: slog.New(slog.DiscardHandler)}
			runCtx, cancel := context.WithTimeout(ctx, sc.timeout)
			defer cancel()
			if _, err := im.consume(runCtx, j); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(waits) != 1 || waits[want[im.name]] == 0 {
				t.Errorf("receives by WaitTimeSeconds %v, want every one %d", waits, want[im.name])
			}
		})
	}
}
