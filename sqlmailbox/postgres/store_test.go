package postgres_test

import (
	"sync"
	"testing"

	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/storetest"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// TestStore runs the Store's scenarios (queue management, the sweep, the
// audit and archive tables, the worker registry) on the server PG_DSN
// names, each on a fresh database, on the wall clock (so the retention
// periods, a minute at least, are not waited out: SQLite's test does).
// Without PG_DSN it skips here, before any scenario starts.
func TestStore(t *testing.T) {
	sqlharness.PGDSN(t)
	var dbs sync.Map // *testing.T → the DSN of its database; each test opens its own, one call at a time
	storetest.Run(t, storetest.Env{
		Open: func(t *testing.T, cfg sqlmailbox.Config) *sqlmailbox.Store {
			dsn, ok := dbs.Load(t)
			if !ok {
				dsn = sqlharness.FreshDatabase(t) // may skip or fail t: no lock is held here
				dbs.Store(t, dsn)
			}
			st, err := postgres.Open(t.Context(), dsn.(string), postgres.Options{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		Run: func(t *testing.T, body func(*testing.T)) { body(t) },
	})
}
