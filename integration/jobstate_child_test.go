package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/dynamostore"
	"github.com/sqsloop/sqsloop/jobstate/pgstate"
	"github.com/sqsloop/sqsloop/jobstate/sqlitestate"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/visibility"
)

// jobChildEnv makes this test binary a consumer process of the checkpoint
// and idempotency tests (jobChildMain); its value is a jobChildConfig in
// JSON.
const jobChildEnv = "SQSLOOP_E2E_JOB_CHILD"

// jobChildConfig is what a job child runs: a consumer of Queue (as
// childConfig names it) with leases of Queue.Lease, its jobstate in the
// store StateDialect ("sqlite", "postgres" or "dynamodb": a table on the
// server DYNAMODB_ENDPOINT names) StateTarget names.
//
// With Faults, the consumer's mailbox fails faultRate (30 %) of its
// Receive, Delete and ChangeVisibility calls (faultyMailbox, seeded with
// Seed).
//
// With Steps, the handler is a job of Steps steps of StepTime each that
// checkpoints after every step; it says "step ID N" as step N starts and
// "result ID HASH" at the end. With Idempotent, the idempotency middleware
// keyed by the body wraps a handler that says "start KEY NANOS" and "done
// KEY NANOS" (the wall clock in Unix nanoseconds) around a StepTime run.
// In both, an outermost middleware says "returned KEY" after the
// middleware returned nil from a run of the handler to its end (the
// completion or the checkpoint's mark recorded, the ack not yet made),
// and "finished KEY" after it returned without running the handler (a
// duplicate, a key busy elsewhere, a job marked done or failed); KEY is
// the body with
// Idempotent, the message ID with Steps. For a message whose body is in
// Freeze it then blocks for good after "returned", so that the message
// is never acked, until the test kills the process.
type jobChildConfig struct {
	Queue                     childConfig
	StateDialect, StateTarget string
	Steps                     int
	StepTime                  time.Duration
	Idempotent                bool
	Freeze                    []string
	Faults                    bool
	Seed                      uint64
	Concurrency               int
}

// openState opens the jobstate store a child's config names.
func openState(ctx context.Context, dialect, target string) (jobstate.Store, func(), error) {
	switch dialect {
	case "sqlite":
		s, err := sqlitestate.Open(ctx, target)
		if err != nil {
			return nil, nil, err
		}
		return s, func() { _ = s.Close() }, nil
	case "postgres":
		s, err := pgstate.Open(ctx, target)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	case "dynamodb":
		c, err := dynamoClient(ctx)
		if err != nil {
			return nil, nil, err
		}
		s, err := dynamostore.New(c, target)
		if err != nil {
			return nil, nil, err
		}
		return s, func() {}, nil
	}
	return nil, nil, fmt.Errorf("StateDialect %q: want sqlite, postgres or dynamodb", dialect)
}

// dynamoClient is a client of the DynamoDB-compatible server
// DYNAMODB_ENDPOINT names (scripts/test.sh starts dynalite), with the
// region and credentials the SQS server's tests use.
func dynamoClient(ctx context.Context) (*dynamodb.Client, error) {
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		return nil, errors.New("DYNAMODB_ENDPOINT is unset")
	}
	env, err := harness.ReadEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx, harness.ConfigOptions(env.Region, env.DummyCredentials)...)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) }), nil
}

// migrateState migrates pgstate's tables in dsn's database.
func migrateState(ctx context.Context, dsn string) error {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = pgstate.Migrate(ctx, pool)
	return err
}

// stepHash is the running hash of a job after step n (0-based) of body,
// from prev: what a job's result is, however often it was interrupted.
func stepHash(prev, body string, n int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%d", prev, body, n))
	return hex.EncodeToString(h[:])
}

// runKey carries, in a job child's handler context, its *runFlags.
type runKey struct{}

// runFlags are what a job child's handler sets: started as it starts, ran
// when it ran to its end. The handler returns before the middleware
// around it reads them.
type runFlags struct{ started, ran bool }

// jobProgress is a job's checkpoint.
type jobProgress struct {
	Step int
	Hash string
}

func jobChildMain(raw string) int {
	var cfg jobChildConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return childproc.Failed(fmt.Errorf("%s: %w", jobChildEnv, err))
	}
	ctx := context.Background()
	mb, closeMailbox, err := cfg.Queue.open(ctx)
	if err != nil {
		return childproc.Failed(err)
	}
	defer closeMailbox()
	store, closeStore, err := openState(ctx, cfg.StateDialect, cfg.StateTarget)
	if err != nil {
		return childproc.Failed(err)
	}
	defer closeStore()
	// Outermost: says "returned" once the middleware returned after a run
	// of the handler to its end (its completion or mark recorded), before
	// the consumer acks, and "finished" when it returned without running
	// it.
	key := func(m *sqsloop.Message) string { return m.ID }
	if cfg.Idempotent {
		key = func(m *sqsloop.Message) string { return m.Body }
	}
	mw := []sqsloop.Middleware{func(next sqsloop.Handler) sqsloop.Handler {
		return func(ctx context.Context, m *sqsloop.Message) error {
			flags := &runFlags{}
			err := next(context.WithValue(ctx, runKey{}, flags), m)
			switch {
			case !flags.started:
				childproc.Say("finished %s", key(m))
			case err == nil && flags.ran:
				childproc.Say("returned %s", key(m))
				if slices.Contains(cfg.Freeze, m.Body) {
					select {} // killed here: the handler returned, the ack never comes
				}
			}
			return err
		}
	}}
	var handler sqsloop.Handler
	switch {
	case cfg.Steps > 0:
		cp, err := checkpoint.New(store, checkpoint.Config{Queue: "e2e"})
		if err != nil {
			return childproc.Failed(err)
		}
		mw = append(mw, cp.Middleware)
		handler = func(ctx context.Context, m *sqsloop.Message) error {
			flags := ctx.Value(runKey{}).(*runFlags)
			flags.started = true
			var p jobProgress
			if _, err := checkpoint.LoadJSON(ctx, &p); err != nil {
				return err
			}
			for ; p.Step < cfg.Steps; p.Step++ {
				childproc.Say("step %s %d", m.ID, p.Step)
				time.Sleep(cfg.StepTime)
				p.Hash = stepHash(p.Hash, m.Body, p.Step)
				if err := checkpoint.SaveJSON(ctx, jobProgress{p.Step + 1, p.Hash}); err != nil {
					return err
				}
			}
			childproc.Say("result %s %s", m.ID, p.Hash)
			flags.ran = true
			return nil
		}
	case cfg.Idempotent:
		idem, err := idempotency.New(store, idempotency.Config{Queue: "e2e", Key: func(m *sqsloop.Message) (string, error) { return m.Body, nil },
			Logger: warnLogger()})
		if err != nil {
			return childproc.Failed(err)
		}
		mw = append(mw, idem.Middleware)
		handler = func(ctx context.Context, m *sqsloop.Message) error {
			flags := ctx.Value(runKey{}).(*runFlags)
			flags.started = true
			childproc.Say("start %s %d", m.Body, time.Now().UnixNano())
			time.Sleep(cfg.StepTime)
			childproc.Say("done %s %d", m.Body, time.Now().UnixNano())
			flags.ran = true
			return nil
		}
	default:
		return childproc.Failed(errors.New("neither Steps nor Idempotent"))
	}
	if cfg.Faults {
		mb = newFaultyMailbox(mb, faultRate, cfg.Seed)
	}
	lease := cfg.Queue.Lease
	c, err := consumer.New(mb, handler, consumer.Config{
		Concurrency: max(cfg.Concurrency, 1), VisibilityTimeout: lease, WaitTime: time.Second,
		Visibility: visibility.Config{Interval: lease / 4, Extension: lease},
		Middleware: mw, Logger: warnLogger(), ShutdownTimeout: 10 * time.Second,
	})
	if err != nil {
		return childproc.Failed(err)
	}
	var group lifecycle.LoopGroup
	if err := group.Add("consumer", c); err != nil {
		return childproc.Failed(err)
	}
	if err := group.Run(ctx); err != nil {
		return childproc.Failed(err)
	}
	return 0
}
