package pgstate_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/internal/jobbench"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/pgstate"
	"github.com/sqsloop/sqsloop/jobstate/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// dsn returns PG_DSN with the jobstate tables migrated (skipped when unset,
// failed under CI=true: sqlharness.PGDSN).
func dsn(t *testing.T) string {
	t.Helper()
	d := sqlharness.PGDSN(t)
	pool, err := pgxpool.New(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pgstate.Migrate(t.Context(), pool); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return d
}

func open(t *testing.T, dsn string) *pgstate.Store {
	t.Helper()
	s, err := pgstate.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// The conformance suite on the real server, every client a Store (a pool)
// of its own.
func TestConformance(t *testing.T) {
	d := dsn(t)
	storetest.Run(t, storetest.HarnessFunc(func(t *testing.T) jobstate.Store { return open(t, d) }))
}

// Sweep deletes expired records, not live ones.
func TestSweepDeletesExpiredRecords(t *testing.T) {
	s := open(t, dsn(t))
	prefix := fmt.Sprint("sweep/", time.Now().UnixNano(), "/")
	for i, exp := range []time.Duration{-time.Minute, time.Hour, 0} {
		r := jobstate.Record{Key: fmt.Sprint(prefix, i), State: jobstate.Saved}
		if exp != 0 {
			r.ExpiresAt = time.Now().Add(exp)
		}
		if err := s.Put(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.Sweep(t.Context(), 0); err != nil || n < 1 {
		t.Errorf("Sweep: %d, %v; want at least the 1 expired", n, err)
	}
	for i := 1; i <= 2; i++ {
		if _, err := s.Get(t.Context(), fmt.Sprint(prefix, i)); err != nil {
			t.Errorf("Get of live record %d after Sweep: %v", i, err)
		}
	}
}

// New refuses a database without the tables, and Migrate is idempotent:
// the second reports version 1 and changes nothing.
func TestMigrations(t *testing.T) {
	d := sqlharness.PGDSN(t)
	pool, err := pgxpool.New(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	const schema = "pgstate_migrate_test"
	if _, err := pool.Exec(t.Context(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer pool.Exec(t.Context(), "DROP SCHEMA "+schema+" CASCADE") //nolint:errcheck
	cfg := pool.Config()
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	scoped, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer scoped.Close()
	if _, err := pgstate.New(t.Context(), scoped); !errors.Is(err, pgstate.ErrSchemaOutdated) {
		t.Fatalf("New on a database without the tables: %v, want ErrSchemaOutdated", err)
	}
	for want := range 2 {
		from, err := pgstate.Migrate(t.Context(), scoped)
		if err != nil || from != want {
			t.Fatalf("Migrate %d: from %d, %v; want from %d", want+1, from, err, want)
		}
	}
	if _, err := pgstate.New(t.Context(), scoped); err != nil {
		t.Errorf("New after Migrate: %v", err)
	}
	if _, err := scoped.Exec(t.Context(), "UPDATE sqsloop_jobstate_schema SET version = 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstate.New(t.Context(), scoped); !errors.Is(err, pgstate.ErrSchemaTooNew) {
		t.Errorf("New at version 2: %v, want ErrSchemaTooNew", err)
	}
}

// What the middlewares add per message on PostgreSQL (jobbench.Benchmark;
// PG_DSN's server).
func BenchmarkPostgreSQL(b *testing.B) {
	d := sqlharness.PGDSN(b)
	pool, err := pgxpool.New(b.Context(), d)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pgstate.Migrate(b.Context(), pool); err != nil {
		b.Fatal(err)
	}
	s, err := pgstate.New(b.Context(), pool)
	if err != nil {
		b.Fatal(err)
	}
	jobbench.Benchmark(b, s)
}
