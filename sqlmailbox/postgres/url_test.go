package postgres_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// A postgres:// URL with ?queue=NAME opens that queue of the database (its
// other parameters are pgx's), in a Store of its own that the Mailbox's
// Close closes; without ?queue, sqlmailbox.Open opens the Store. Errors
// never show the password.
func TestOpenMailboxPostgres(t *testing.T) {
	dsn := sqlharness.FreshDatabase(t)
	st, err := sqlmailbox.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: "jobs"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("queue", "jobs")
	u.RawQuery = q.Encode()
	mb, err := sqsloop.OpenMailbox(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "job"}}); err != nil {
		t.Fatal(err)
	}
	store := mb.(interface{ Store() *sqlmailbox.Store }).Store()
	if err := mb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Queue(t.Context(), "jobs"); !errors.Is(err, sqsloop.ErrMailboxClosed) {
		t.Errorf("after Close the Store answers %v; want it closed with the Mailbox", err)
	}
	q.Set("queue", "orders")
	u.RawQuery = q.Encode()
	if u.User == nil {
		u.User = url.UserPassword("nobody", "s3cret")
	} else {
		u.User = url.UserPassword(u.User.Username(), "s3cret")
	}
	if _, err := sqsloop.OpenMailbox(t.Context(), u.String()); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("OpenMailbox with a wrong password = %v; want an error without the password", err)
	}
}
