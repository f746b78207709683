package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// What cannot be a queue database fails at Open, saying why: a DSN that
// does not parse, bad options, a server that does not answer.
func TestOpenRefusesBadDSNs(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name, dsn string
		opts      postgres.Options
		want      error
		mention   string
	}{
		{"not a DSN", "postgres://[::1", postgres.Options{}, sqlmailbox.ErrNotADatabase, "DSN does not parse"},
		{"a bad option", "host=127.0.0.1 sslmode=sometimes", postgres.Options{}, sqlmailbox.ErrNotADatabase, "sslmode"},
		{"bad options", "postgres://127.0.0.1/x", postgres.Options{MaxConns: -1, Config: sqlmailbox.Config{AuditRetention: time.Second}},
			sqsloop.ErrInvalidArgument, "MaxConns"},
		{"no server", "postgres://sqsloop@127.0.0.1:1/postgres?connect_timeout=5", postgres.Options{}, nil, "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := postgres.Open(ctx, tc.dsn, tc.opts)
			if err == nil {
				st.Close()
				t.Fatalf("Open(%q) succeeded", tc.dsn)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Open(%q) = %v, want an error wrapping %v", tc.dsn, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("Open(%q) = %v, want it to mention %q", tc.dsn, err, tc.mention)
			}
			t.Logf("%s: %v", tc.name, err)
		})
	}
}

// A database migrated by a newer sqsloop is refused at Open, and left as it
// is.
func TestOpenRefusesANewerSchema(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.FreshDatabase(t)
	st, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	execSQL(t, dsn, `UPDATE sqsloop_schema SET version = 99`)
	st, err = postgres.Open(ctx, dsn, postgres.Options{})
	if err == nil {
		st.Close()
		t.Fatal("Open of a version-99 schema succeeded")
	}
	if !errors.Is(err, sqlmailbox.ErrSchemaTooNew) || !strings.Contains(err.Error(), "99") {
		t.Fatalf("Open of a version-99 schema: %v, want ErrSchemaTooNew naming the version", err)
	}
	t.Log(err)
	var v int
	query(t, dsn, `SELECT version FROM sqsloop_schema`, &v)
	if v != 99 {
		t.Fatalf("after the refused Open the schema version is %d, want 99", v)
	}
}

func execSQL(t *testing.T, dsn, sql string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), sql); err != nil {
		t.Fatal(err)
	}
}

func query(t *testing.T, dsn, sql string, dest ...any) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(t.Context(), sql).Scan(dest...); err != nil {
		t.Fatal(err)
	}
}

// The database going away mid-run is transient, and nothing is lost: a
// consumer (8 handlers, 5 s leases) works through 300 messages on a server
// of the test's own, which crashes (pg_ctl stop -m immediate: no
// checkpoint, every connection dropped) once 100 are done and stays down
// for consumer.NotReadyAfter and 2 s more. Meanwhile calls fail with
// transient errors (not ErrQueueNotFound, not ErrMailboxClosed), and the
// consumer's Ready reports it; once the server is back, from its
// write-ahead log, the consumer finishes every message, Ready is nil
// again, and the queue is empty: every sent message ran at least once.
func TestServerCrashAndRestartLosesNothing(t *testing.T) {
	srv := sqlharness.StartPGServer(t)
	ctx := t.Context()
	st, err := postgres.Open(ctx, srv.DSN(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	bodies := make([]string, 300)
	for i := range bodies {
		bodies[i] = fmt.Sprint("job-", i)
	}
	ids := mailboxtest.SendBodies(ctx, t, mb, bodies...)

	var mu sync.Mutex
	ran := map[string]int{}
	hundred := make(chan struct{})
	c, err := consumer.New(mb, func(ctx context.Context, m *sqsloop.Message) error {
		time.Sleep(10 * time.Millisecond) // the handler's work
		mu.Lock()
		defer mu.Unlock()
		ran[m.ID]++
		if len(ran) == 100 {
			close(hundred)
		}
		return nil
	}, consumer.Config{Concurrency: 8, VisibilityTimeout: 5 * time.Second, WaitTime: time.Second, ShutdownTimeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()

	select {
	case <-hundred:
	case err := <-done:
		t.Fatalf("Run returned before 100 messages ran: %v", err)
	}
	if err := srv.Crash(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	_, err = mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "while down"}})
	if err == nil || errors.Is(err, sqsloop.ErrQueueNotFound) || errors.Is(err, sqsloop.ErrMailboxClosed) || errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Fatalf("Send with the server down: %v, want a transient error", err)
	}
	t.Logf("Send with the server down: %v", err)
	for time.Since(down) < consumer.NotReadyAfter+2*time.Second {
		if err := sqlharness.Sleep(ctx, 500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Ready(); err == nil {
		t.Errorf("Ready() = nil after %v with the server down, want an error", time.Since(down).Round(time.Second))
	} else {
		t.Logf("Ready() with the server down: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for {
		mu.Lock()
		n := len(ran)
		mu.Unlock()
		if n == len(ids) {
			break
		}
		if time.Since(back) > time.Minute {
			t.Fatalf("a minute after the restart %d of %d messages have run", n, len(ids))
		}
		if err := sqlharness.Sleep(ctx, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("every message ran %v after the restart", time.Since(back).Round(time.Millisecond))
	// Messages whose acks were lost in the crash run again once their
	// leases end: the queue empties only then.
	for {
		a, err := mb.QueueAttributes(ctx)
		if err == nil && a.ApproximateMessages+a.ApproximateMessagesInFlight+a.ApproximateMessagesDelayed == 0 {
			break
		}
		if time.Since(back) > time.Minute {
			t.Fatalf("a minute after the restart the queue still holds messages: %+v, %v", a, err)
		}
		if err := sqlharness.Sleep(ctx, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	for c.Ready() != nil && time.Since(back) < time.Minute {
		if err := sqlharness.Sleep(ctx, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Ready(); err != nil {
		t.Errorf("Ready() after the restart: %v", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	twice := 0
	for _, id := range ids {
		if ran[id] > 1 {
			twice++
		}
	}
	mu.Unlock()
	t.Logf("300 messages: all ran, %d more than once (their acks were lost in the crash); stats %+v", twice, c.Stats())
	mailboxtest.ExpectNone(ctx, t, mb, 6*time.Second) // past the 5 s leases: nothing left hidden
}

// An acked message stays deleted when the server crashes, and the wake-up
// of other processes' long polls comes back with the server. On a server of
// the test's own, one Store (a receiving process, which looks at the
// database only every minute) acks messages another Store sent, as fast as
// it can, with 1-minute leases (so a Delete that returned deleted its
// message); once 300 Deletes have returned, the server crashes (pg_ctl stop
// -m immediate: no checkpoint, every connection dropped) and starts again,
// recovering from its write-ahead log. None of the acked messages is in the
// table then. And a long poll of the receiving Store is woken by the other's
// send, before its 20 s end, once before the crash and once after: its
// listener reconnected.
func TestServerCrashKeepsAcksAndWakeUps(t *testing.T) {
	srv := sqlharness.StartPGServer(t)
	ctx := t.Context()
	receiving := openStore(t, srv.DSN(), sqlmailbox.Config{PollInterval: time.Minute})
	sending := openStore(t, srv.DSN(), sqlmailbox.Config{})
	jobs, wake, sendWake := openQueue(t, receiving, "jobs"), openQueue(t, receiving, "wake"), openQueue(t, sending, "wake")
	expectWokenBy(t, wake, sendWake, "before the crash")

	bodies := make([]string, 2000)
	for i := range bodies {
		bodies[i] = fmt.Sprint("job-", i)
	}
	mailboxtest.SendBodies(ctx, t, openQueue(t, sending, "jobs"), bodies...)
	var (
		mu      sync.Mutex
		acked   = map[string]bool{}
		enough  = make(chan struct{})
		stopped = make(chan error, 1) // why the acker stopped: the crash, as a rule
	)
	go func() {
		for {
			msgs, err := jobs.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute})
			if err == nil && len(msgs) == 0 {
				err = errors.New("the queue ran dry")
			}
			if err != nil {
				stopped <- err
				return
			}
			handles := make([]string, len(msgs))
			for i, m := range msgs {
				handles[i] = m.ReceiptHandle
			}
			errs, err := jobs.Delete(ctx, handles)
			if err != nil {
				stopped <- err
				return
			}
			mu.Lock()
			for i, m := range msgs {
				if errs[i] == nil {
					acked[m.ID] = true
				}
			}
			if len(acked) >= 300 && len(acked)-len(msgs) < 300 {
				close(enough)
			}
			mu.Unlock()
		}
	}()
	select {
	case <-enough:
	case err := <-stopped:
		t.Fatalf("the acker stopped before 300 acks: %v", err)
	}
	if err := srv.Crash(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the acker stopped at the crash: %v", <-stopped)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	left := 0
	for _, id := range messageIDs(t, srv.DSN()) {
		left++
		if acked[id] {
			t.Errorf("message %s: its Delete returned before the crash, but it is in sqsloop_messages after the restart", id)
		}
	}
	if left == 0 || left+len(acked) > len(bodies) {
		t.Errorf("%d messages left and %d acked, of %d sent", left, len(acked), len(bodies))
	}
	t.Logf("crashed after %d acks; %d messages left after the restart", len(acked), left)

	for _, mb := range []sqsloop.Mailbox{wake, sendWake} { // the pools reconnect
		waitUntilAnswering(t, mb)
	}
	expectWokenBy(t, wake, sendWake, "after the restart")
}

// messageIDs returns the IDs of every message in the database dsn names,
// in flight or not, reading the table directly.
func messageIDs(t *testing.T, dsn string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `SELECT message_id FROM sqsloop_messages`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// waitUntilAnswering calls mb until a call succeeds (its Store's pool has
// reconnected after a restart), failing t after a minute.
func waitUntilAnswering(t *testing.T, mb sqsloop.Mailbox) {
	t.Helper()
	start := time.Now()
	for {
		_, err := mb.(sqsloop.AttributesReader).QueueAttributes(t.Context())
		if err == nil {
			return
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("a minute after the restart calls still fail: %v", err)
		}
		if err := sqlharness.Sleep(t.Context(), 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
}

// A role the server refuses, or one lacking a privilege, fails with
// sqsloop.ErrAccessDenied (which the consumer does not retry as if it were
// transient), reaching the server's error: a login as a role that does not
// exist (SQLSTATE 28000) at Open; and a role allowed to open the Store and
// read its queues but not its messages (42501) at Send and Receive.
func TestPermissionErrorsAreAccessDenied(t *testing.T) {
	ctx := t.Context()
	role := newRole(t)
	dsn := sqlharness.FreshDatabase(t)
	owner, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs"}); err != nil {
		t.Fatal(err)
	}
	execSQL(t, dsn, "GRANT SELECT ON sqsloop_schema, sqsloop_queues TO "+role)
	denied := func(what string, err error) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.Is(err, sqsloop.ErrAccessDenied) || !errors.As(err, &pe) {
			t.Errorf("%s: %v, want sqsloop.ErrAccessDenied wrapping the server's error", what, err)
			return
		}
		t.Logf("%s: %v", what, err)
	}

	_, err = postgres.Open(ctx, as(t, dsn, "nobody_"+role), postgres.Options{})
	denied("Open as a role that does not exist", err)

	st, err := postgres.Open(ctx, as(t, dsn, role), postgres.Options{})
	if err != nil {
		t.Fatalf("Open as a role that may read the schema: %v", err)
	}
	defer st.Close()
	mb, err := st.Queue(ctx, "jobs")
	if err != nil {
		t.Fatalf("Queue as a role that may read the queues: %v", err)
	}
	defer mb.Close()
	_, err = mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "x"}})
	denied("Send without the privilege", err)
	_, err = mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1})
	denied("Receive without the privilege", err)
}

// A session the server terminates (pg_terminate_backend) under a receive,
// an ack or a visibility change costs the call a round trip on another
// connection, not an error: here every session of the Store's pool is
// terminated before each call, which then succeeds.
func TestTerminatedSessionsAreRetriedAtOnce(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.FreshDatabase(t)
	st, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "terminated"})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	mailboxtest.SendBodies(ctx, t, mb, "a", "b")
	terminate := func() {
		t.Helper()
		var n int
		query(t, dsn, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`, &n)
		if n == 0 {
			t.Fatal("no session of the Store to terminate")
		}
	}
	terminate()
	msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 2, VisibilityTimeout: time.Minute})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("Receive after its sessions were terminated: %d messages, %v; want both", len(msgs), err)
	}
	terminate()
	if errs, err := mb.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: msgs[0].ReceiptHandle, Timeout: time.Hour}}); err != nil || errs[0] != nil {
		t.Fatalf("ChangeVisibility after its sessions were terminated: %v, %v", errs, err)
	}
	terminate()
	if errs, err := mb.Delete(ctx, []string{msgs[0].ReceiptHandle, msgs[1].ReceiptHandle}); err != nil || errs[0] != nil || errs[1] != nil {
		t.Fatalf("Delete after its sessions were terminated: %v, %v", errs, err)
	}
	mailboxtest.ExpectNone(ctx, t, mb, 0)
}
