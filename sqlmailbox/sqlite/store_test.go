package sqlite_test

import (
	"path/filepath"
	"sync"
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
	var files sync.Map // *testing.T → the file of its database
	storetest.Run(t, storetest.Env{
		Open: func(t *testing.T, cfg sqlmailbox.Config) *sqlmailbox.Store {
			path, _ := files.LoadOrStore(t, filepath.Join(t.TempDir(), "q.db"))
			st, err := sqlite.Open(t.Context(), path.(string), sqlite.Options{Config: cfg})
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
