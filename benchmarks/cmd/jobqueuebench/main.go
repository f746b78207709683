// Command jobqueuebench is sqsloop's adapter for the public PostgreSQL
// job-queue benchmark (github.com/hardbyte/postgresql-job-queue-benchmarking):
// one long-running process that speaks the harness's JSONL contract
// (its CONTRIBUTING_ADAPTERS.md), through sqsloop's public API only, as
// River's and pgmq's adapters do for theirs:
//
//   - the schema is sqlmailbox's own install path (postgres.Migrate);
//   - the queue is a standard queue with a dead-letter queue
//     (MaxReceiveCount 25, as River's 25 attempts) and a 30 s visibility
//     timeout (River's adapter rescues stuck jobs after 30 s);
//   - jobs are sent by a producer.Producer (batches of up to 10, several
//     calls at once) and handled by a consumer.Consumer with WORKER_COUNT
//     handlers, each job taking JOB_WORK_MS;
//   - pickup latency (claim_p50/p95/p99_ms) is a handler's start minus the
//     message's SentAt (the database's clock at the insert, as River's
//     adapter uses the job's CreatedAt), over a rolling 30 s window kept in
//     an HDR histogram (3 significant figures, bounded memory);
//   - the producer credits offered load on wall-clock time: with
//     PRODUCER_PACING=harness (the harness's default) it sends what each
//     "ENQUEUE <n>" line on standard input asks; otherwise it paces itself
//     at PRODUCER_RATE (re-read from PRODUCER_RATE_CONTROL_FILE, for
//     high-load phases) or, with PRODUCER_MODE=depth-target, keeps
//     TARGET_DEPTH messages waiting.
//
// Standard output is telemetry (one descriptor line, then samples every
// SAMPLE_EVERY_S seconds, aligned to the wall clock); standard error is
// logs, and at SIGTERM one JSON line of kind "final" with this replica's
// totals and the queue's counts (visible, in flight, delayed, dead
// letters), which is how a jobs_lost estimate of the harness is explained.
// SIGTERM drains the consumer (4 s) and exits 0 within 5 s.
//
// sqsloop-bench.patch, beside this file, offers the adapter upstream in the
// form the harness asks for (CONTRIBUTING_ADAPTERS.md): a sqsloop-bench
// directory with the static manifest (adapter.json), a Dockerfile that
// builds this command from a pinned sqsloop checkout (the harness's
// submodule pattern) and a README with the registration steps; it holds
// none of the harness's own code. Apply it in a checkout of the harness
// with git apply.
//
// Environment (the harness sets it): DATABASE_URL (required), SCENARIO
// (long_horizon, or migrate_only), PRODUCER_MODE, PRODUCER_RATE,
// PRODUCER_PACING, PRODUCER_BATCH_MAX, PRODUCER_BATCH_MS,
// PRODUCER_RATE_CONTROL_FILE, TARGET_DEPTH, WORKER_COUNT, JOB_PAYLOAD_BYTES,
// JOB_WORK_MS, SAMPLE_EVERY_S, BENCH_INSTANCE_ID; MAX_CONNECTIONS sizes the
// pool (20, as River's adapter). PRODUCER_MAX_ATTEMPTS is ours: how many
// times the producer tries a message (producer.Config.MaxAttempts), 1 by
// default, the workload of the harness's River and pgmq adapters, which
// drop a batch whose insert failed (counted here in send_failures); 0 is
// the producer's own 10, about 20 s of retries, with which a send waits
// through a database outage while the pacing's credit grows, and the jobs
// of the outage go out at once when it ends.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/producer"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// system is the adapter's name in the harness (adapter.json's "system").
const system = "sqsloop"

// queueName is the benchmark's queue; its dead-letter queue is
// queueName + "_dlq" (sqsloop.QueueSpec.DeadLetterQueueName).
const queueName = "long_horizon_bench"

// settings are the harness's environment, read once.
type settings struct {
	dsn, scenario, mode, pacing, rateFile string
	rate, batchMax, batchMS, targetDepth  int
	workers, payload, workMS, sampleEvery int
	instance, maxConns, maxAttempts       int
}

func readSettings() (settings, error) {
	s := settings{
		dsn:      os.Getenv("DATABASE_URL"),
		scenario: env("SCENARIO", "long_horizon"),
		mode:     env("PRODUCER_MODE", "fixed"),
		pacing:   env("PRODUCER_PACING", "adapter"),
		rateFile: os.Getenv("PRODUCER_RATE_CONTROL_FILE"),
	}
	var errs []error
	for _, f := range []struct {
		key      string
		def, min int
		to       *int
	}{
		{"PRODUCER_RATE", 800, 0, &s.rate},
		{"PRODUCER_BATCH_MAX", 128, 1, &s.batchMax},
		{"PRODUCER_BATCH_MS", 10, 1, &s.batchMS},
		{"TARGET_DEPTH", 1000, 0, &s.targetDepth},
		{"WORKER_COUNT", 32, 1, &s.workers},
		{"JOB_PAYLOAD_BYTES", 256, 0, &s.payload},
		{"JOB_WORK_MS", 1, 0, &s.workMS},
		{"SAMPLE_EVERY_S", 5, 1, &s.sampleEvery},
		{"BENCH_INSTANCE_ID", 0, 0, &s.instance},
		{"MAX_CONNECTIONS", 20, 1, &s.maxConns},
		{"PRODUCER_MAX_ATTEMPTS", 1, 0, &s.maxAttempts},
	} {
		v, err := strconv.Atoi(env(f.key, strconv.Itoa(f.def)))
		if err != nil || v < f.min {
			errs = append(errs, fmt.Errorf("%s: must be an integer ≥ %d, got %q", f.key, f.min, os.Getenv(f.key)))
			continue
		}
		*f.to = v
	}
	if s.dsn == "" {
		errs = append(errs, errors.New("DATABASE_URL: must be set"))
	}
	if s.mode != "fixed" && s.mode != "depth-target" {
		errs = append(errs, fmt.Errorf("PRODUCER_MODE: must be fixed or depth-target, got %q", s.mode))
	}
	return s, errors.Join(errs...)
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func main() {
	s, err := readSettings()
	if err != nil {
		fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, s); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "[%s] %v\n", system, err)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "["+system+"] "+format+"\n", args...)
}

// run migrates, sets the queue up, and runs the producer, the consumer, the
// depth poller and the sampler until ctx ends (SIGTERM), then drains.
func run(ctx context.Context, s settings) error {
	if err := migrate(ctx, s.dsn); err != nil {
		return err
	}
	if s.scenario == "migrate_only" {
		return nil
	}
	if s.scenario != "long_horizon" {
		return fmt.Errorf("SCENARIO: only long_horizon and migrate_only, got %q", s.scenario)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := postgres.Open(ctx, s.dsn, postgres.Options{MaxConns: int32(s.maxConns)})
	if err != nil {
		return err
	}
	defer store.Close()
	mb, err := store.CreateQueue(ctx, sqsloop.QueueSpec{Name: queueName, VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 25})
	if err != nil {
		return err
	}
	defer mb.Close()
	if err := emitDescriptor(ctx, s); err != nil {
		return err
	}

	t := newTelemetry(s)
	c, err := consumer.New(mb, t.handler(s.workMS), consumer.Config{
		Concurrency:       s.workers,
		VisibilityTimeout: 30 * time.Second,
		ShutdownTimeout:   4 * time.Second,
		Logger:            quiet,
	})
	if err != nil {
		return err
	}
	p, err := producer.New(mb, producer.Config{MaxAttempts: s.maxAttempts})
	if err != nil {
		return err
	}

	// Everything below stops when ctx ends; the consumer drains after.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	consumed := make(chan error, 1)
	go func() { consumed <- c.Run(runCtx) }()
	var wg sync.WaitGroup
	wg.Go(func() { t.pollDepth(ctx, mb, s.instance == 0 || s.mode == "depth-target") })
	wg.Go(func() { t.sample(ctx) })
	wg.Go(func() { produce(ctx, s, p, t) })

	<-ctx.Done()
	logf("shutdown signal received")
	wg.Wait()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 4500*time.Millisecond)
	defer stopCancel()
	_ = p.Close(stopCtx)
	if err := c.Shutdown(stopCtx); err != nil {
		logf("consumer shutdown: %v", err)
	}
	cancel()
	<-consumed
	t.final(stopCtx, mb, c.Stats())
	return nil
}

// migrate brings sqlmailbox's schema up to date (its own install path,
// under an advisory lock: replicas starting together migrate once).
func migrate(ctx context.Context, dsn string) error {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = postgres.Migrate(ctx, pool)
	return err
}

// emitDescriptor writes the startup descriptor.
func emitDescriptor(ctx context.Context, s settings) error {
	pool, err := pgxpool.New(ctx, s.dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	schema, err := postgres.ReadSchemaVersion(ctx, pool)
	if err != nil {
		return err
	}
	db := "sqsloop_bench"
	if u, err := url.Parse(s.dsn); err == nil && strings.TrimPrefix(u.Path, "/") != "" {
		db = strings.TrimPrefix(u.Path, "/")
	}
	emit(map[string]any{
		"kind":           "descriptor",
		"system":         system,
		"event_tables":   []string{"public.sqsloop_messages"},
		"extensions":     []string{},
		"version":        version(),
		"schema_version": strconv.Itoa(schema.Database),
		"db_name":        db,
		"started_at":     isoNow(),
		"instance_id":    s.instance,
	})
	return nil
}

// version is the sqsloop module's version, or the commit this binary was
// built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/sqsloop/sqsloop" && d.Version != "" && d.Version != "v0.0.0" {
			return d.Version
		}
	}
	rev, dirty := "", false
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			dirty = kv.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

var stdout = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

// emit writes one JSONL record to standard output.
func emit(rec map[string]any) {
	stdout.Lock()
	defer stdout.Unlock()
	_ = stdout.enc.Encode(rec)
}

func isoNow() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00") }
