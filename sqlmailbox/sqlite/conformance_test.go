package sqlite_test

import (
	"testing"

	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// TestSQLiteConformance runs the conformance suite on sqlmailbox/sqlite
// (sqlharness.SQLite): every scenario on a database file of its own, in
// virtual time, so exact instants are checked (a lease ends exactly when
// its visibility timeout does) while every call goes through SQLite.
func TestSQLiteConformance(t *testing.T) {
	mailboxtest.Run(t, sqlharness.SQLite{})
}
