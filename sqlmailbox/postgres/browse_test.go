package postgres_test

import (
	"sync"
	"testing"

	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/storetest"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// TestOperator runs the scenarios of the operator's calls (browse, count,
// move, delete, history) on the server PG_DSN names, each on a fresh
// database. Without PG_DSN it skips.
func TestOperator(t *testing.T) {
	sqlharness.PGDSN(t)
	var dbs sync.Map // *testing.T → the DSN of its database
	storetest.RunOperator(t, storetest.Env{
		Open: func(t *testing.T, cfg sqlmailbox.Config) *sqlmailbox.Store {
			dsn, ok := dbs.Load(t)
			if !ok {
				dsn = sqlharness.FreshDatabase(t)
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
