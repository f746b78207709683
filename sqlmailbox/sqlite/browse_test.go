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

// TestOperator runs the scenarios of the operator's calls (browse, count,
// move, delete, history) on SQLite, in virtual time.
func TestOperator(t *testing.T) {
	var files sync.Map // *testing.T → the file of its database
	storetest.RunOperator(t, storetest.Env{
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
