package sqlitestate_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/jobbench"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/sqlitestate"
	"github.com/sqsloop/sqsloop/jobstate/storetest"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// open opens path, closed when t ends.
func open(t *testing.T, path string) *sqlitestate.Store {
	t.Helper()
	s, err := sqlitestate.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The conformance suite, every client a Store of its own on one file (as
// processes sharing it).
func TestConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	storetest.Run(t, storetest.HarnessFunc(func(t *testing.T) jobstate.Store { return open(t, path) }))
}

// Sweep deletes the expired records and no other.
func TestSweepDeletesExpiredRecords(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	for i, exp := range []time.Duration{-time.Minute, -time.Second, time.Hour, 0} {
		r := jobstate.Record{Key: string(rune('a' + i)), State: jobstate.Saved}
		if exp != 0 {
			r.ExpiresAt = time.Now().Add(exp)
		}
		if err := s.Put(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Sweep(t.Context(), 0)
	if err != nil || n != 2 {
		t.Errorf("Sweep: %d, %v; want the 2 expired", n, err)
	}
	for _, k := range []string{"c", "d"} {
		if _, err := s.Get(t.Context(), k); err != nil {
			t.Errorf("Get %q after Sweep: %v, want it kept", k, err)
		}
	}
}

// A file shared with sqlmailbox/sqlite: the jobstate tables sit beside
// the mailbox's, neither Open disturbs the other, and a file whose jobstate
// tables a newer sqsloop wrote is refused.
func TestSharesTheFileOfAMailbox(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	mb, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	s := open(t, path)
	if err := s.Put(t.Context(), jobstate.Record{Key: "k", State: jobstate.Saved}); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: "jobs"}); err != nil {
		t.Errorf("the mailbox after the jobstate tables were made: %v", err)
	}
	if v, err := sqlite.ReadSchemaVersion(t.Context(), path); err != nil || v.Database != v.Latest {
		t.Errorf("sqlmailbox's schema: %+v, %v; want it current, untouched", v, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE sqsloop_jobstate_schema SET version = 2"); err != nil {
		t.Fatal(err)
	}
	if s, err := sqlitestate.Open(t.Context(), path); !errors.Is(err, sqlitestate.ErrSchemaTooNew) {
		if s != nil {
			_ = s.Close()
		}
		t.Errorf("Open of a file at jobstate schema 2: %v, want ErrSchemaTooNew", err)
	}
	if _, err := sqlitestate.Open(t.Context(), "a?b"); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("Open of a path with '?': %v, want ErrInvalidArgument", err)
	}
}

// What the middlewares add per message on a SQLite file
// (jobbench.Benchmark; synchronous=FULL: every write waits for an fsync).
func BenchmarkSQLite(b *testing.B) {
	s, err := sqlitestate.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	jobbench.Benchmark(b, s)
}
