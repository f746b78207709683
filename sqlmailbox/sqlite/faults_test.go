package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// What cannot be a queue database fails at Open, with an error that says
// why: a file that is not SQLite, a directory, a path SQLite would read as
// URI parameters, bad options, a schema a newer sqsloop wrote.
func TestOpenRefusesWhatIsNotADatabase(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		opts       sqlite.Options
		want       error
		mention    string
	}{
		{"a text file", text, sqlite.Options{}, sqlmailbox.ErrNotADatabase, text},
		{"a directory", dir, sqlite.Options{}, sqlmailbox.ErrNotADatabase, "directory"},
		{"URI parameters", filepath.Join(dir, "q.db?mode=ro"), sqlite.Options{}, sqlmailbox.ErrNotADatabase, "'?'"},
		{"a missing directory", filepath.Join(dir, "missing", "q.db"), sqlite.Options{}, nil, "missing"},
		{"bad options", filepath.Join(dir, "q.db"), sqlite.Options{BusyTimeout: -time.Second, Synchronous: "OFF",
			Config: sqlmailbox.Config{PollInterval: time.Hour}}, sqsloop.ErrInvalidArgument, "Options.BusyTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := sqlite.Open(ctx, tc.path, tc.opts)
			if err == nil {
				st.Close()
				t.Fatalf("Open(%q) succeeded", tc.path)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Open(%q) = %v, want an error wrapping %v", tc.path, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("Open(%q) = %v, want it to mention %q", tc.path, err, tc.mention)
			}
			t.Logf("%s: %v", tc.name, err)
		})
	}
	// Every bad option is named at once.
	_, err := sqlite.Open(ctx, filepath.Join(dir, "q.db"), sqlite.Options{BusyTimeout: -time.Second, Synchronous: "OFF",
		Config: sqlmailbox.Config{PollInterval: time.Hour}})
	for _, field := range []string{"BusyTimeout", "Synchronous", "PollInterval"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Open with three bad options: %v, want %s named", err, field)
		}
	}
}

// A database migrated by a newer sqsloop is refused at Open, and left as it
// is: the schema version says so, and a clear error tells to upgrade.
func TestOpenRefusesANewerSchema(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "q.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	setVersion(t, path, 99)
	st, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err == nil {
		st.Close()
		t.Fatal("Open of a version-99 schema succeeded")
	}
	if !errors.Is(err, sqlmailbox.ErrSchemaTooNew) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("Open of a version-99 schema: %v, want ErrSchemaTooNew naming the version", err)
	}
	t.Log(err)
	if v := version(t, path); v != 99 {
		t.Fatalf("after the refused Open the schema version is %d, want 99 (untouched)", v)
	}
}

func setVersion(t *testing.T, path string, v int) {
	t.Helper()
	exec(t, path, fmt.Sprintf(`UPDATE sqsloop_schema SET version = %d`, v))
}

// exec runs a statement on the file at path, on a connection of its own.
func exec(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

func version(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT version FROM sqsloop_schema`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A file locked by another process makes a call wait, within the busy
// timeout, never fail with SQLITE_BUSY: while a child process holds SQLite's
// exclusive lock, a Send is made; it has not returned a second later, when
// the child is killed (its lock goes with it), and then it succeeds, and
// the message is received. With a busy timeout of 100 ms, the same call
// fails while the lock is held, and its error says the file was locked past
// the busy timeout.
func TestLockedFileWaitsWithinBusyTimeout(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "q.db")
	mb := openJobs(t, path)

	locker := startChild(t, "lock", path)
	locker.Expect(t, "locked", 30*time.Second)
	type sent struct {
		res []sqsloop.SendResult
		err error
	}
	sending := make(chan sent, 1)
	go func() {
		res, err := mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "sent while the file was locked"}})
		sending <- sent{res, err}
	}()
	select {
	case r := <-sending:
		t.Fatalf("Send returned while another process held the lock: %+v, %v", r.res, r.err)
	case <-time.After(time.Second): // still waiting for the lock, as it should
	}
	unlock(t, locker)
	r := <-sending
	if r.err != nil || r.res[0].Err != nil {
		t.Fatalf("Send once the lock was let go: %+v, %v", r.res, r.err)
	}
	got := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)
	if got[0].ID != r.res[0].MessageID {
		t.Fatalf("received %s, want %s", got[0].ID, r.res[0].MessageID)
	}
	mailboxtest.AckAll(ctx, t, mb, got...)

	impatient, err := sqlite.Open(ctx, path, sqlite.Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	mb2, err := impatient.Queue(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	locker = startChild(t, "lock", path)
	locker.Expect(t, "locked", 30*time.Second)
	_, err = mb2.Send(ctx, []sqsloop.OutgoingMessage{{Body: "too impatient"}})
	if err == nil || !strings.Contains(err.Error(), "busy timeout") {
		t.Fatalf("Send with a 100 ms busy timeout against a lock held: %v, want an error naming the busy timeout", err)
	}
	t.Logf("with a 100 ms busy timeout: %v", err)
	unlock(t, locker)
}

// unlock kills the lock-holding child and waits for its end, when the
// operating system lets go of its locks.
func unlock(t *testing.T, locker *childproc.Child) {
	t.Helper()
	if err := locker.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for range locker.Lines {
	}
	<-locker.Exited
}

// Two processes on one file work correctly: two consumer processes, both
// long-polling before the first message is sent, drain one queue of 1,000
// messages together (1 ms of work each, so that neither can finish alone
// before the other's poll, 200 ms at most, sees them), with 30 s leases;
// every message is received by exactly one of them, once, and both take
// part.
func TestTwoProcessesShareOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "q.db")
	mb := openJobsWith(t, path, sqlite.Options{BusyTimeout: shareBusyTimeout})
	a, b := startChild(t, "consume", path), startChild(t, "consume", path)
	a.Expect(t, "ready", 30*time.Second)
	b.Expect(t, "ready", 30*time.Second)
	bodies := make([]string, 1000)
	for i := range bodies {
		bodies[i] = fmt.Sprint("job-", i)
	}
	ids := mailboxtest.SendBodies(ctx, t, mb, bodies...)
	got := map[string][]string{}
	for name, c := range map[string]*childproc.Child{"a": a, "b": b} {
		for line := range c.Lines {
			if id, ok := strings.CutPrefix(line, "got "); ok {
				got[id] = append(got[id], name)
			}
		}
		if err := <-c.Exited; err != nil {
			t.Fatalf("consumer %s: %v; stderr:\n%s", name, err, c.Stderr())
		}
	}
	perChild := map[string]int{}
	for _, id := range ids {
		switch who := got[id]; len(who) {
		case 1:
			perChild[who[0]]++
		case 0:
			t.Errorf("message %s was received by neither process", id)
		default:
			t.Errorf("message %s was received %d times, by %v, within its 30 s lease", id, len(who), who)
		}
	}
	t.Logf("%d messages: process a received %d, process b %d, none twice", len(ids), perChild["a"], perChild["b"])
	if perChild["a"] == 0 || perChild["b"] == 0 {
		t.Errorf("one process received everything (a %d, b %d): the file was not shared", perChild["a"], perChild["b"])
	}
	mailboxtest.ExpectNone(ctx, t, mb, time.Second)
}

// A message whose Send returned survives the sender's SIGKILL at any
// moment after: a child process sends batches as fast as it can, printing
// each message ID once Send has returned, and is killed mid-stream; every
// ID it printed is in the file.
func TestSentMessagesSurviveSIGKILL(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "q.db")
	sender := startChild(t, "send", path)
	var sent []string
	for line := range sender.Lines {
		if id, ok := strings.CutPrefix(line, "sent "); ok {
			sent = append(sent, id)
		}
		if len(sent) == 500 {
			_ = sender.Cmd.Process.Kill()
		}
	}
	if err := <-sender.Exited; err == nil {
		t.Fatalf("the sender exited cleanly; stderr:\n%s", sender.Stderr())
	}
	mb := openJobs(t, path)
	stored := drain(ctx, t, mb)
	for _, id := range sent {
		if !stored[id] {
			t.Errorf("message %s: Send returned before the kill, but it is not in the file", id)
		}
	}
	t.Logf("killed after %d messages reported sent; %d in the file (sends in flight at the kill may add some)", len(sent), len(stored))
}

// An acked message is not delivered again after the acker's SIGKILL: a
// child process receives and deletes, printing each ID once Delete has
// returned, and is killed mid-stream; no printed ID is received again.
func TestAckedMessagesStayDeletedAfterSIGKILL(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "q.db")
	mb := openJobs(t, path)
	bodies := make([]string, 2000)
	for i := range bodies {
		bodies[i] = fmt.Sprint("job-", i)
	}
	mailboxtest.SendBodies(ctx, t, mb, bodies...)

	acker := startChild(t, "ack", path)
	acked := map[string]bool{}
	for line := range acker.Lines {
		if id, ok := strings.CutPrefix(line, "acked "); ok {
			acked[id] = true
		}
		if len(acked) == 300 {
			_ = acker.Cmd.Process.Kill()
		}
	}
	<-acker.Exited
	if len(acked) < 300 {
		t.Fatalf("the acker ended after %d acks; stderr:\n%s", len(acked), acker.Stderr())
	}
	// The killed acker's receives hold their messages for an hour: a nack
	// is not possible without their handles, so look past the leases.
	left := 0
	for id := range drainIgnoringLeases(ctx, t, path) {
		left++
		if acked[id] {
			t.Errorf("message %s was acked before the kill but is still in the file", id)
		}
	}
	if left+len(acked) > len(bodies) || left == 0 {
		t.Errorf("%d messages left and %d acked, of %d sent", left, len(acked), len(bodies))
	}
	t.Logf("killed after %d acks; %d messages left, none of them acked", len(acked), left)
}

// drain receives and deletes everything visible in mb and returns the IDs.
func drain(ctx context.Context, t *testing.T, mb sqsloop.Mailbox) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for {
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return ids
		}
		for _, m := range msgs {
			ids[m.ID] = true
		}
		mailboxtest.AckAll(ctx, t, mb, msgs...)
	}
}

// drainIgnoringLeases lists the message IDs the file holds, in flight or
// not, reading its table directly.
func drainIgnoringLeases(ctx context.Context, t *testing.T, path string) map[string]bool {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT message_id FROM sqsloop_messages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	return ids
}

// openJobs opens the file at path and returns the Mailbox of its queue
// "jobs", created if missing; both are closed when t ends.
func openJobs(t *testing.T, path string) *sqlmailbox.Mailbox {
	t.Helper()
	return openJobsWith(t, path, sqlite.Options{})
}

// shareBusyTimeout is the busy timeout of the processes of
// TestTwoProcessesShareOneFile: a minute.
const shareBusyTimeout = time.Minute

// openJobsWith is openJobs with opts.
func openJobsWith(t *testing.T, path string, opts sqlite.Options) *sqlmailbox.Mailbox {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mb, err := st.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	return mb
}
