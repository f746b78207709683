package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// A new file gets the schema at Open (the embedded default needs no
// step of its own), but a file with an older schema is not altered
// without being asked: Open refuses it (ErrSchemaOutdated, saying to run
// sqlite.Migrate) and leaves it as it is; Migrate brings it up to date,
// reporting the version it found, keeping its rows; ReadSchemaVersion reads
// without creating a missing file.
func TestOpenMigratesOnlyANewFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	v, err := sqlite.ReadSchemaVersion(ctx, fresh)
	if err != nil || v.Database != 0 || v.Latest < 2 {
		t.Fatalf("ReadSchemaVersion of a missing file: %+v, %v", v, err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadSchemaVersion created the file: %v", err)
	}
	st, err := sqlite.Open(ctx, fresh, sqlite.Options{})
	if err != nil {
		t.Fatalf("Open of a new file: %v", err)
	}
	st.Close()
	if v, err := sqlite.ReadSchemaVersion(ctx, fresh); err != nil || v.Database != v.Latest {
		t.Fatalf("after Open of a new file: %+v, %v; want the latest version", v, err)
	}

	old := filepath.Join(dir, "old.db")
	if err := sqlite.MigrateTo(ctx, old, 1); err != nil { // as the first release left it
		t.Fatal(err)
	}
	exec(t, old, `INSERT INTO sqsloop_workers (id, queue, host, pid, started_at, last_seen) VALUES ('old', 'q', 'h', 1, 0, 0)`)
	st, err = sqlite.Open(ctx, old, sqlite.Options{})
	if err == nil {
		st.Close()
		t.Fatal("Open of a version-1 file succeeded")
	}
	if !errors.Is(err, sqlmailbox.ErrSchemaOutdated) || !strings.Contains(err.Error(), "sqlite.Migrate") {
		t.Fatalf("Open of a version-1 file: %v, want ErrSchemaOutdated saying to run sqlite.Migrate", err)
	}
	t.Log(err)
	if v := version(t, old); v != 1 {
		t.Fatalf("the refused Open left version %d, want 1", v)
	}
	v, err = sqlite.Migrate(ctx, old)
	if err != nil || v.Database != 1 || v.Latest != version(t, fresh) {
		t.Fatalf("Migrate of a version-1 file: %+v, %v; want from 1 to the latest", v, err)
	}
	st, err = sqlite.Open(ctx, old, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if rs, err := st.Receivers(ctx); err != nil || len(rs) != 1 || rs[0].ID != "old" {
		t.Fatalf("receivers after the migration: %+v, %v; want the row version 1 kept", rs, err)
	}
}

// The Store's reads take no write lock, so a dashboard's or an operator's
// process does not wait for the workers' writes, nor hold them up: while
// another process holds the file's write lock, a Store with a 100 ms busy
// timeout still opens the file, opens a queue, and reads its attributes,
// the receivers, the audit and the archive; ReadSchemaVersion reads the
// version. (A write then fails past the busy timeout, as it must.)
func TestReadsTakeNoWriteLock(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "q.db")
	mb := openJobs(t, path)
	mailboxtest.SendBodies(ctx, t, mb, "a")
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)

	locker := startChild(t, "lock", path)
	locker.Expect(t, "locked", 30*time.Second)
	defer unlock(t, locker)
	st, err := sqlite.Open(ctx, path, sqlite.Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open while another process holds the write lock: %v", err)
	}
	defer st.Close()
	q, err := st.Queue(ctx, "jobs")
	if err != nil {
		t.Fatalf("Queue while another process holds the write lock: %v", err)
	}
	defer q.Close()
	if a, err := q.QueueAttributes(ctx); err != nil || a.ApproximateMessagesInFlight != 1 {
		t.Errorf("QueueAttributes while another process holds the write lock: %+v, %v", a, err)
	}
	if rs, err := st.Receivers(ctx); err != nil || len(rs) != 1 {
		t.Errorf("Receivers while another process holds the write lock: %+v, %v", rs, err)
	}
	if _, err := st.Audit(ctx, "", 10); err != nil {
		t.Errorf("Audit while another process holds the write lock: %v", err)
	}
	if _, err := st.Archived(ctx, "jobs", 10); err != nil {
		t.Errorf("Archived while another process holds the write lock: %v", err)
	}
	if v, err := sqlite.ReadSchemaVersion(ctx, path); err != nil || v.Database != v.Latest {
		t.Errorf("ReadSchemaVersion while another process holds the write lock: %+v, %v", v, err)
	}
	if _, err := q.Send(ctx, []sqsloop.OutgoingMessage{{Body: "b"}}); err == nil || !strings.Contains(err.Error(), "busy timeout") {
		t.Errorf("Send while another process holds the write lock: %v, want the busy timeout's error", err)
	}
}
