package integration

import (
	"testing"

	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// forEachSQLBackend runs body on sqlmailbox's two databases, as subtests
// named after their harness: "sqlmailbox/sqlite" (a database file per
// queue, inside a synctest bubble: virtual time) and "sqlmailbox/postgres"
// (the server PG_DSN names, which scripts/test.sh starts; wall clock;
// skipped, or failed under CI=true, without it). forEachBackend calls it,
// so every end-to-end scenario runs on both.
func forEachSQLBackend(t *testing.T, body func(t *testing.T, h mailboxtest.Harness)) {
	t.Helper()
	lite := sqlharness.SQLite{}
	t.Run(lite.Name(), func(t *testing.T) {
		t.Parallel()
		lite.Run(t, func(t *testing.T) { body(t, lite) })
	})
	t.Run("sqlmailbox/postgres", func(t *testing.T) {
		t.Parallel()
		h := sqlharness.NewPostgres(t)
		h.Run(t, func(t *testing.T) { body(t, h) })
	})
}

// skipSQLBackends adds the subtests forEachSQLBackend would run, skipped
// with why, for a scenario whose behaviour is not sqlmailbox's to show
// here. They are skipped outside synctest's bubble: a Skip inside it is
// reported as a PASS.
func skipSQLBackends(t *testing.T, why string) {
	for _, name := range []string{sqlharness.SQLite{}.Name(), (*sqlharness.Postgres)(nil).Name()} {
		t.Run(name, func(t *testing.T) { t.Skipf("%s: %s", name, why) })
	}
}
