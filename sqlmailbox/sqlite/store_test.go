package sqlite_test

import (
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/storetest"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// TestStore runs the Store's scenarios (queue management, the sweep, the
// audit and archive tables, the worker registry) on SQLite, in virtual
// time, so retention periods of minutes are waited out too.
func TestStore(t *testing.T) {
	storetest.Run(t, storetest.Env{
		Open: func(t *testing.T, cfg sqlmailbox.Config) *sqlmailbox.Store {
			st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "q.db"), sqlite.Options{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		Run:         func(t *testing.T, body func(*testing.T)) { synctest.Test(t, body) },
		VirtualTime: true,
	})
}
