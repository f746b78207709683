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
func TestStore(t *testing.T) {
	var (
		mu  sync.Mutex
		dbs = map[*testing.T]string{} // the DSN of each test's database
	)
	storetest.Run(t, storetest.Env{
		Open: func(t *testing.T, cfg sqlmailbox.Config) *sqlmailbox.Store {
			mu.Lock()
			dsn, ok := dbs[t]
			if !ok {
				dsn = sqlharness.FreshDatabase(t)
				dbs[t] = dsn
			}
			mu.Unlock()
			st, err := postgres.Open(t.Context(), dsn, postgres.Options{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		Run: func(t *testing.T, body func(*testing.T)) { body(t) },
	})
}
