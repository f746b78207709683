package postgres_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// newPool returns a pool on dsn, closed when t ends.
func newPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Migrating is a step of its own: a Store does not open on a database
// without sqlmailbox's schema, or with an older one (ErrSchemaOutdated,
// naming the versions and what to run), and changes nothing there;
// Migrate brings either up to date, reporting the version it found, and
// then the Store opens and keeps what the older schema held.
func TestOpenRequiresAMigratedSchema(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.EmptyDatabase(t)
	pool := newPool(t, dsn)
	latest := mustVersion(t, pool).Latest

	outdated := func(when string, have int) {
		t.Helper()
		st, err := postgres.New(ctx, pool, postgres.Options{})
		if err == nil {
			st.Close()
			t.Fatalf("%s: New succeeded", when)
		}
		if !errors.Is(err, sqlmailbox.ErrSchemaOutdated) || !strings.Contains(err.Error(), "postgres.Migrate") {
			t.Fatalf("%s: New: %v, want ErrSchemaOutdated saying to run postgres.Migrate", when, err)
		}
		if v := mustVersion(t, pool); v.Database != have {
			t.Fatalf("%s: the refused New left schema version %d, want %d", when, v.Database, have)
		}
		t.Logf("%s: %v", when, err)
	}
	outdated("no schema", 0)
	var tables int
	query(t, dsn, `SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sqsloop%'`, &tables)
	if tables != 0 {
		t.Fatalf("the refused New created %d tables", tables)
	}

	if err := postgres.MigrateTo(ctx, pool, 1); err != nil { // as the first release left it
		t.Fatal(err)
	}
	owner, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err == nil || !errors.Is(err, sqlmailbox.ErrSchemaOutdated) {
		t.Fatalf("Open of a version-1 schema: %v, want ErrSchemaOutdated", err)
	}
	outdated("version 1", 1)
	execSQL(t, dsn, `INSERT INTO sqsloop_workers (id, queue, host, pid, started_at, last_seen) VALUES ('old', 'q', 'h', 1, now(), now())`)

	v, err := postgres.Migrate(ctx, pool)
	if err != nil || v.Database != 1 || v.Latest != latest {
		t.Fatalf("Migrate of a version-1 schema: %+v, %v; want it from 1 to %d", v, err, latest)
	}
	if v := mustVersion(t, pool); v.Database != latest {
		t.Fatalf("after Migrate: %+v", v)
	}
	if v, err := postgres.Migrate(ctx, pool); err != nil || v.Database != latest {
		t.Fatalf("a second Migrate: %+v, %v; want nothing to do", v, err)
	}
	owner, err = postgres.New(ctx, pool, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	rs, err := owner.Receivers(ctx)
	if err != nil || len(rs) != 1 || rs[0].ID != "old" {
		t.Fatalf("receivers after the migration: %+v, %v; want the row version 1 kept", rs, err)
	}
}

// Migration 4 keys the messages by id alone, makes the receive's index
// partial (to every message) and indexes a FIFO queue's by queue in id
// order: messages a version-3 schema holds (a standard
// queue's, a FIFO group's, one of them in flight) are all there after it,
// the in-flight one still held, and the FIFO group delivers in its order.
func TestMigrationKeysMessagesByID(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.EmptyDatabase(t)
	pool := newPool(t, dsn)
	if err := postgres.MigrateTo(ctx, pool, 3); err != nil {
		t.Fatal(err)
	}
	execSQL(t, dsn, `INSERT INTO sqsloop_queues
		(name, fifo, content_based_dedup, visibility_timeout, delay, retention, max_message_size, max_receive_count, key)
		VALUES ('jobs', false, false, 30, 0, 345600, 262144, 0, '\x00'), ('jobs.fifo', true, false, 30, 0, 345600, 262144, 0, '\x01')`)
	execSQL(t, dsn, `INSERT INTO sqsloop_messages (queue_id, message_id, body, group_id, dedup_id, sent_at, visible_at)
		SELECT q.id, q.name || n, q.name || n, CASE WHEN q.fifo THEN 'g' ELSE '' END, CASE WHEN q.fifo THEN 'd' || n ELSE '' END,
			now(), now()
		FROM sqsloop_queues q, generate_series(1, 4) n ORDER BY q.id, n`)
	execSQL(t, dsn, `UPDATE sqsloop_messages SET receive_count = 1, received_at = now(), visible_at = now() + interval '1 hour', leased = true
		WHERE message_id = 'jobs4'`)
	if v, err := postgres.Migrate(ctx, pool); err != nil || v.Database != 3 {
		t.Fatalf("Migrate of a version-3 schema: %+v, %v", v, err)
	}
	var key, ready, fifo string
	query(t, dsn, `SELECT pg_get_indexdef('sqsloop_messages_pkey'::regclass), pg_get_indexdef('sqsloop_messages_ready'::regclass),
		pg_get_indexdef('sqsloop_messages_fifo'::regclass)`, &key, &ready, &fifo)
	if !strings.HasSuffix(key, "(id)") || !strings.HasSuffix(ready, "WHERE (queue_id IS NOT NULL)") ||
		!strings.HasSuffix(fifo, "(queue_id, id) WHERE (dedup_id <> ''::text)") {
		t.Fatalf("after the migration: the key %q, the receive's index %q, the FIFO index %q", key, ready, fifo)
	}

	st, err := postgres.New(ctx, pool, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		queue string
		want  []string
	}{{"jobs", []string{"jobs1", "jobs2", "jobs3"}}, {"jobs.fifo", []string{"jobs.fifo1", "jobs.fifo2", "jobs.fifo3", "jobs.fifo4"}}} {
		mb, err := st.Queue(ctx, c.queue)
		if err != nil {
			t.Fatal(err)
		}
		got := mailboxtest.ReceiveN(ctx, t, mb, len(c.want), 10*time.Second, time.Minute)
		var bodies []string
		for _, m := range got {
			bodies = append(bodies, m.Body)
		}
		if strings.Join(bodies, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s delivered %q after the migration, want %q", c.queue, bodies, c.want)
		}
		mailboxtest.AckAll(ctx, t, mb, got...)
		a, err := mb.QueueAttributes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if held := map[string]int{"jobs": 1, "jobs.fifo": 0}[c.queue]; a.ApproximateMessages != 0 || a.ApproximateMessagesInFlight != held {
			t.Errorf("%s after the acks: %d visible, %d in flight; want 0 and %d", c.queue, a.ApproximateMessages, a.ApproximateMessagesInFlight, held)
		}
	}
}

// mustVersion reads pool's schema version.
func mustVersion(t *testing.T, pool *pgxpool.Pool) sqlmailbox.SchemaVersion {
	t.Helper()
	v, err := postgres.ReadSchemaVersion(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A role with no more than SELECT, INSERT, UPDATE and DELETE on the
// migrated tables and USAGE on their sequences (what an application's
// role is granted; PostgreSQL 15 denies it CREATE on schema public, and
// the test checks that it has none) opens a Store and does everything a
// worker and an operator do: create and open queues, send, receive (long
// polls woken by LISTEN/NOTIFY included), extend, nack, ack, record
// failures, sweep, list the receivers, the audit and the archive, delete a
// queue. A migration by that role is refused with sqsloop.ErrAccessDenied.
func TestLeastPrivilegedRoleRunsTheQueues(t *testing.T) {
	ctx := t.Context()
	role := newRole(t)
	dsn := sqlharness.FreshDatabase(t)
	if err := sqlharness.Exec(dsn, "REVOKE CREATE ON SCHEMA public FROM PUBLIC; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+role+
		"; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "+role); err != nil {
		t.Fatal(err)
	}
	var canCreate bool
	query(t, dsn, `SELECT has_schema_privilege('`+role+`', 'public', 'CREATE')`, &canCreate)
	if canCreate {
		t.Fatalf("role %s may CREATE in schema public: the test would prove nothing", role)
	}
	app := as(t, dsn, role)
	pool := newPool(t, app)
	if _, err := postgres.Migrate(ctx, pool); !errors.Is(err, sqsloop.ErrAccessDenied) {
		t.Errorf("Migrate as the application's role: %v, want ErrAccessDenied", err)
	}

	st, err := postgres.New(ctx, pool, postgres.Options{Config: sqlmailbox.Config{Archive: true, PollInterval: time.Minute}})
	if err != nil {
		t.Fatalf("New as a role with SELECT, INSERT, UPDATE, DELETE and sequence USAGE: %v", err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	fifo, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs.fifo", FIFO: true, ContentBasedDeduplication: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	// A long poll begun before the send is woken by it: LISTEN and NOTIFY
	// need no privilege.
	other := openStore(t, app, sqlmailbox.Config{})
	sender, err := other.Queue(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	expectWokenBy(t, mb, sender, "woken")

	mailboxtest.SendBodies(ctx, t, mb, "ok", "fails")
	got := mailboxtest.ReceiveN(ctx, t, mb, 2, 10*time.Second, time.Minute)
	for _, m := range got {
		if errs, err := mb.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: m.ReceiptHandle, Timeout: 2 * time.Minute}}); err != nil || errs[0] != nil {
			t.Fatalf("extend: %v %v", errs, err)
		}
		if m.Body == "fails" {
			if err := mb.RecordFailure(ctx, m, "no"); err != nil {
				t.Fatal(err)
			}
			if errs, err := mb.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: m.ReceiptHandle}}); err != nil || errs[0] != nil {
				t.Fatalf("nack: %v %v", errs, err)
			}
			continue
		}
		mailboxtest.AckAll(ctx, t, mb, m)
	}
	mailboxtest.SendAll(ctx, t, fifo, sqsloop.OutgoingMessage{Body: "f", MessageGroupID: "g"})
	mailboxtest.AckAll(ctx, t, fifo, mailboxtest.ReceiveN(ctx, t, fifo, 1, 10*time.Second, time.Minute)...)
	if _, err := st.Sweep(ctx); err != nil {
		t.Errorf("Sweep: %v", err)
	}
	if rs, err := st.Receivers(ctx); err != nil || len(rs) == 0 {
		t.Errorf("Receivers: %v, %v", rs, err)
	}
	if a, err := st.Audit(ctx, "jobs", 10); err != nil || len(a) != 1 {
		t.Errorf("Audit: %v, %v; want the failure", a, err)
	}
	if a, err := st.Archived(ctx, "jobs", 10); err != nil || len(a) != 2 { // "ok", and "woken" acked by expectWokenBy
		t.Errorf("Archived: %v, %v; want the two acked messages", a, err)
	}
	if _, err := mb.QueueAttributes(ctx); err != nil {
		t.Errorf("QueueAttributes: %v", err)
	}
	if err := st.DeleteQueue(ctx, "jobs.fifo"); err != nil {
		t.Errorf("DeleteQueue: %v", err)
	}
}

// newRole creates a login role of its own for t, dropped when t ends
// (after its databases: cleanups run last first, so call it before
// sqlharness.FreshDatabase).
func newRole(t *testing.T) string {
	t.Helper()
	admin := sqlharness.PGDSN(t)
	var r [4]byte
	_, _ = rand.Read(r[:])
	role := "sqsloop_test_" + hex.EncodeToString(r[:])
	if err := sqlharness.Exec(admin, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sqlharness.Exec(admin, "DROP ROLE "+role); err != nil {
			t.Logf("dropping role %s: %v", role, err)
		}
	})
	return role
}

// as returns dsn with user in place of its user.
func as(t *testing.T, dsn, user string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(user)
	return u.String()
}
