package postgres_test

import (
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// TestPostgresConformance runs the conformance suite on sqlmailbox/postgres
// against the server PG_DSN names (scripts/test.sh starts one), on the wall
// clock. Without PG_DSN it skips, saying how to get a server, except under
// CI=true, where it fails.
func TestPostgresConformance(t *testing.T) {
	h := sqlharness.NewPostgres(t)
	start := time.Now()
	t.Cleanup(func() { t.Logf("%s: conformance suite took %v", h.Name(), time.Since(start).Round(time.Millisecond)) })
	mailboxtest.Run(t, h)
}
