// Package jobstores gives a test each kind of jobstate.Store: Memory,
// SQLite (jobstate/sqlitestate, a file of the test's own), PostgreSQL
// (jobstate/pgstate at PG_DSN) and DynamoDB (jobstate/dynamostore at
// DYNAMODB_ENDPOINT), so that what is built on a Store (packages
// checkpoint and idempotency) is tested on every one. Only _test.go files
// import it.
package jobstores

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/dynamostore"
	"github.com/sqsloop/sqsloop/jobstate/pgstate"
	"github.com/sqsloop/sqsloop/jobstate/sqlitestate"
)

// Each runs body once per kind of store, as subtests named memory,
// sqlite, postgres and dynamodb, each with a new Store closed when the
// subtest ends. The stores that live in the process (memory, SQLite) run
// body in a testing/synctest bubble, so its sleeps are virtual; on a
// server's store body runs on the wall clock, in parallel with the other
// server's (once the caller's test function has returned). A server that
// is not configured skips its subtest, saying how to get one (fails it
// under CI=true). Keys a server keeps from an earlier run are the caller's to
// avoid: a namespace of the run's own (Namespace).
func Each(t *testing.T, body func(t *testing.T, s jobstate.Store)) {
	t.Run("memory", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) { body(t, &jobstate.Memory{}) })
	})
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		synctest.Test(t, func(t *testing.T) {
			s, err := sqlitestate.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			body(t, s)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		body(t, Postgres(t))
	})
	t.Run("dynamodb", func(t *testing.T) {
		t.Parallel()
		c, table := DynamoDB(t)
		s, err := dynamostore.New(c, table)
		if err != nil {
			t.Fatal(err)
		}
		body(t, s)
	})
}

// Namespace is a namespace of t's run of its own (its name and the time),
// for Config.Queue: a server's store keeps the keys of earlier runs.
func Namespace(t testing.TB) string {
	return fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
}

// Postgres returns a pgstate Store on PG_DSN's database, its jobstate
// tables migrated, closed when t ends. PG_DSN unset: t skips, or fails
// under CI=true (sqlharness.PGDSN).
func Postgres(t testing.TB) *pgstate.Store {
	t.Helper()
	dsn := sqlharness.PGDSN(t)
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pgstate.Migrate(t.Context(), pool); err != nil {
		t.Fatalf("pgstate.Migrate: %v", err)
	}
	s, err := pgstate.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// DynamoDB returns a client of the DynamoDB-compatible server
// DYNAMODB_ENDPOINT names (scripts/test.sh starts dynalite and sets it)
// and a new table on it (without Time to Live: dynalite does not
// implement UpdateTimeToLive, and the Store does not depend on it),
// deleted when t ends. Unset, it skips t, saying how to get one, except
// under CI=true, where it fails t.
func DynamoDB(t testing.TB) (*dynamodb.Client, string) {
	t.Helper()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		const how = "DYNAMODB_ENDPOINT is unset, so there is no DynamoDB-compatible server to test jobstate/dynamostore on.\n" +
			"*** ./scripts/test.sh starts one (dynalite, from npm in integration/); or run\n" +
			"*** `(cd integration && npm ci && node node_modules/.bin/dynalite --port 4567 &)` and set DYNAMODB_ENDPOINT=http://localhost:4567."
		if os.Getenv("CI") == "true" {
			t.Fatal(how + " CI=true: a skipped suite would hide that nothing was tested.")
		}
		t.Skip("\n*** SKIPPING: " + how + " (CI=true makes this a failure.)")
	}
	env, err := harness.ReadEnv(func(k string) string {
		if k == "SQS_SERVER" {
			return "" // the SQS server's kind says nothing of this one
		}
		return os.Getenv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadDefaultConfig(t.Context(), harness.ConfigOptions(env.Region, env.DummyCredentials)...)
	if err != nil {
		t.Fatal(err)
	}
	// A transport of the test's own, whose connections it closes at the
	// end: goleak would report their goroutines.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.HTTPClient = &http.Client{Transport: tr}
	})
	table := fmt.Sprintf("sqsloop-jobstate-%d", time.Now().UnixNano())
	if err := dynamostore.CreateTable(t.Context(), c, table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table})
	})
	return c, table
}
