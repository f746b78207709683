package sqlite_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	_ "github.com/sqsloop/sqsloop/sqlmailbox/sqlite" // registers sqlite:
)

// A sqlite: URL with ?queue=NAME opens that queue of the file, absolute or
// relative, in a Store of its own that the Mailbox's Close closes; without
// ?queue it opens the Store (sqlmailbox.Open). A queue that does not exist
// is sqsloop.ErrQueueNotFound, a URL without a file or with another
// parameter an error naming it.
func TestOpenMailboxSQLite(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	st, err := sqlmailbox.Open(t.Context(), "sqlite:jobs.db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"sqlite:jobs.db?queue=jobs", "sqlite://" + filepath.Join(dir, "jobs.db") + "?queue=jobs", "sqlite:" + filepath.Join(dir, "jobs.db") + "?queue=jobs"} {
		mb, err := sqsloop.OpenMailbox(t.Context(), u)
		if err != nil {
			t.Fatalf("OpenMailbox(%q): %v", u, err)
		}
		if _, err := mb.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "job"}}); err != nil {
			t.Fatal(err)
		}
		a, err := mb.(sqsloop.AttributesReader).QueueAttributes(t.Context())
		if err != nil || a.MaxReceiveCount != 3 || a.ApproximateMessages == 0 {
			t.Errorf("OpenMailbox(%q): attributes %+v, %v; want the queue made above", u, a, err)
		}
		st := mb.(interface{ Store() *sqlmailbox.Store }).Store()
		if err := mb.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Queue(t.Context(), "jobs"); !errors.Is(err, sqsloop.ErrMailboxClosed) {
			t.Errorf("OpenMailbox(%q): after Close the Store answers %v; want it closed with the Mailbox", u, err)
		}
	}
	for _, tc := range []struct {
		url  string
		want error
		says string
	}{
		{"sqlite:jobs.db?queue=orders", sqsloop.ErrQueueNotFound, "orders"},
		{"sqlite:jobs.db", sqsloop.ErrInvalidArgument, "?queue=NAME"},
		{"sqlite:jobs.db?queue=jobs&busy=1s", sqsloop.ErrInvalidArgument, `unknown parameter "busy"`},
		{"sqlite://jobs.db?queue=jobs", sqsloop.ErrInvalidArgument, "sqlite://NAME would name a host"},
	} {
		mb, err := sqsloop.OpenMailbox(t.Context(), tc.url)
		if err == nil {
			mb.Close()
		}
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("OpenMailbox(%q) = %v; want %v saying %s", tc.url, err, tc.want, tc.says)
		}
	}
}
