package integration

import (
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// forEachBackend runs body once per Mailbox backend, as subtests named after
// the harness: "memmailbox" (inside a synctest bubble, virtual time) and
// "sqsmailbox/<server kind>" (real server, wall clock; skipped, or failed
// under CI=true, when no server can be had), then sqlmailbox's
// "sqlmailbox/sqlite" and "sqlmailbox/postgres" (forEachSQLBackend). body
// creates its queues with h.NewQueue and waits with h.Sleep.
//
// The subtests run in parallel (t.Parallel): the wire ones mostly wait on
// their server, so a scenario takes as long as its slowest backend, not
// the sum. So forEachBackend is the last thing its caller does (the
// subtests start once the caller's function has returned), and body shares
// nothing mutable across backends.
//
// It is the entry point for end-to-end consumer scenarios
// (consumer_e2e_test.go): write one body and it runs on every backend.
func forEachBackend(t *testing.T, body func(t *testing.T, h mailboxtest.Harness)) {
	t.Helper()
	forEachSQSBackend(t, body)
	forEachSQLBackend(t, body)
}

// forEachSQSBackend runs body on forEachBackend's first two: "memmailbox"
// and "sqsmailbox/<server kind>".
func forEachSQSBackend(t *testing.T, body func(t *testing.T, h mailboxtest.Harness)) {
	t.Helper()
	t.Run(harness.Mem{}.Name(), func(t *testing.T) {
		t.Parallel()
		harness.Mem{}.Run(t, func(t *testing.T) { body(t, harness.Mem{}) })
	})
	t.Run("sqsmailbox", func(t *testing.T) {
		t.Parallel()
		h := sqsServerHarness(t)
		h.Run(t, func(t *testing.T) { body(t, h) })
	})
}

// TestForEachBackend checks the helper the end-to-end tests build on: each
// backend gets a working queue.
func TestForEachBackend(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{})
		defer cleanup()
		ids := mailboxtest.SendBodies(ctx, t, q.Mailbox, "ping")
		m := mailboxtest.ReceiveN(ctx, t, q.Mailbox, 1, patience, longLease)[0]
		if m.ID != ids[0] || m.Body != "ping" {
			t.Fatalf("%s: received %s, want the ping sent as %s", h.Name(), describe([]*sqsloop.Message{m}), ids[0])
		}
		mailboxtest.AckAll(ctx, t, q.Mailbox, m)
	})
}
