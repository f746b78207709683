// Package sqlharness holds the mailboxtest.Harness of sqlmailbox on its two
// databases: SQLite (a fresh file per queue, in a testing/synctest bubble:
// virtual time) and PostgreSQL (the server PG_DSN names, on the wall
// clock), and PGDSN, which reads that setting for every test that needs the
// server. It is a package of its own, beside internal/harness, so that the
// tests of memmailbox and sqsmailbox compile no database driver.
//
// Like internal/harness it is test support: only _test.go files import it,
// those of sqlmailbox's packages and of the integration module.
package sqlharness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// features are sqlmailbox's: every capability and behaviour of Amazon SQS
// that mailboxtest checks. It has no declared difference.
func features() mailboxtest.Features {
	return mailboxtest.Features{
		FIFO:                   true,
		DLQ:                    true,
		AttributesReader:       true,
		Priority:               true,
		LeaseCeiling:           true,
		FIFOBatchesWithinGroup: true,
		RedriveKeepsMessageID:  true,
		OmitsUnaskedAttributes: true,
		FIFODeleteExpires:      true,
		StandardGroupID:        true,
	}
}

// spec is the sqsloop.QueueSpec of opts, named name.
func spec(name string, opts mailboxtest.QueueOptions) sqsloop.QueueSpec {
	if opts.FIFO {
		name += sqsloop.FIFOSuffix
	}
	return sqsloop.QueueSpec{
		Name:                      name,
		FIFO:                      opts.FIFO,
		ContentBasedDeduplication: opts.ContentBasedDeduplication,
		VisibilityTimeout:         opts.VisibilityTimeout,
		Delay:                     opts.Delay,
		MaxReceiveCount:           opts.MaxReceiveCount,
		Priority:                  opts.Priority,
	}
}

// newQueue creates the queue of opts in st and returns its mailboxes; it
// fails t on an error.
func newQueue(ctx context.Context, t testing.TB, st *sqlmailbox.Store, name string, opts mailboxtest.QueueOptions) mailboxtest.Queue {
	t.Helper()
	sp := spec(name, opts)
	mb, err := st.CreateQueue(ctx, sp)
	if err != nil {
		t.Fatalf("sqlmailbox: CreateQueue %s: %v", sp.Name, err)
	}
	q := mailboxtest.Queue{Mailbox: mb}
	if opts.MaxReceiveCount > 0 {
		dlq, err := st.Queue(ctx, sp.DeadLetterQueueName())
		if err != nil {
			_ = mb.Close()
			t.Fatalf("sqlmailbox: opening the DLQ %s: %v", sp.DeadLetterQueueName(), err)
		}
		q.DLQ, q.DeadLetterQueue = dlq, sp.DeadLetterQueueName()
	}
	return q
}

// SQLite runs mailboxtest scenarios, and the end-to-end tests, on
// sqlmailbox/sqlite: each scenario in a testing/synctest bubble (virtual
// time: sqlmailbox's SQLite driver reads the caller's clock), each queue in
// a database file of its own under a temporary directory. The zero value is
// ready to use; safe for concurrent use.
type SQLite struct{}

var _ mailboxtest.Harness = SQLite{}

// Name returns "sqlmailbox/sqlite".
func (SQLite) Name() string { return "sqlmailbox/sqlite" }

// Features declares everything Amazon SQS has, in virtual time.
func (SQLite) Features() mailboxtest.Features {
	f := features()
	f.VirtualTime = true
	return f
}

// Run runs body in a synctest bubble.
func (SQLite) Run(t *testing.T, body func(t *testing.T)) { synctest.Test(t, body) }

// Sleep waits d on the bubble's clock, or until ctx is done.
func (SQLite) Sleep(ctx context.Context, d time.Duration) error { return Sleep(ctx, d) }

// NewQueue opens a Store on a new file (the queue "queue", with its DLQ
// "queue-dlq" for a redrive policy) and returns its mailboxes; cleanup
// closes them and the Store. Call it inside Run's bubble, from the test's
// goroutine.
func (SQLite) NewQueue(ctx context.Context, t testing.TB, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
	t.Helper()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "queues.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	q := newQueue(ctx, t, st, "queue", opts)
	return q, func() { closeAll(q); _ = st.Close() }
}

// PGDSN returns PG_DSN, the PostgreSQL server the tests use
// (scripts/postgres.sh starts one and sets it), with sqlmailbox's schema
// migrated in its database (once per test binary). Unset, it skips t,
// saying how to get one, except under CI=true, where it fails t: a skipped
// suite would hide that nothing was tested. Call it from t's goroutine,
// holding no lock: t.Skip and t.Fatal do not return.
func PGDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("PG_DSN")
	if dsn == "" {
		const how = "PG_DSN is unset, so there is no PostgreSQL server to test sqlmailbox/postgres on.\n" +
			"*** ./scripts/test.sh starts one (scripts/postgres.sh: initdb and pg_ctl on a temporary directory, installing\n" +
			"*** Debian's postgresql package if its binaries are missing); or run `eval \"$(scripts/postgres.sh start $$)\"` and test again."
		if os.Getenv("CI") == "true" {
			t.Fatal(how + " CI=true: a skipped suite would hide that nothing was tested.")
		}
		t.Skip("\n*** SKIPPING: " + how + " (CI=true makes this a failure.)")
	}
	if err := migrateOnce(dsn); err != nil {
		t.Fatalf("migrating sqlmailbox's schema in PG_DSN's database: %v", err)
	}
	return dsn
}

// migrateOnce migrates PG_DSN's database the first time it is called and
// returns that migration's error every time.
func migrateOnce(dsn string) error {
	migrated.Do(func() { migrateErr = migrate(dsn) })
	return migrateErr
}

var (
	migrated   sync.Once
	migrateErr error
)

// Postgres runs mailboxtest scenarios, and the end-to-end tests, on
// sqlmailbox/postgres against a real server, on the wall clock, each
// queue named after its test with a random part, in one Store. Build it
// with NewPostgres. Safe for concurrent use.
type Postgres struct {
	st *sqlmailbox.Store
}

var _ mailboxtest.Harness = (*Postgres)(nil)

// NewPostgres opens a Store on the server PG_DSN names (PGDSN: skipped, or
// failed under CI=true, when unset), closed when t ends.
func NewPostgres(t testing.TB) *Postgres {
	t.Helper()
	dsn := PGDSN(t)
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
	if err != nil {
		t.Fatalf("postgres.Open(PG_DSN): %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &Postgres{st: st}
}

// Store returns the harness's Store.
func (h *Postgres) Store() *sqlmailbox.Store { return h.st }

// Name returns "sqlmailbox/postgres".
func (h *Postgres) Name() string { return "sqlmailbox/postgres" }

// Features declares everything Amazon SQS has, on the wall clock.
func (h *Postgres) Features() mailboxtest.Features { return features() }

// Run calls body directly: the server runs on the wall clock.
func (h *Postgres) Run(t *testing.T, body func(t *testing.T)) { body(t) }

// Sleep waits d on the wall clock, or until ctx is done.
func (h *Postgres) Sleep(ctx context.Context, d time.Duration) error { return Sleep(ctx, d) }

// NewQueue creates a queue of its own (and its DLQ) and returns its
// mailboxes; cleanup closes them and deletes the queues.
func (h *Postgres) NewQueue(ctx context.Context, t testing.TB, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
	t.Helper()
	name := QueueName(t)
	q := newQueue(ctx, t, h.st, name, opts)
	return q, func() {
		closeAll(q)
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		sp := spec(name, opts)
		if err := h.st.DeleteQueue(dctx, sp.Name); err != nil {
			t.Logf("deleting queue %s: %v", sp.Name, err)
		}
		if opts.MaxReceiveCount > 0 {
			if err := h.st.DeleteQueue(dctx, sp.DeadLetterQueueName()); err != nil {
				t.Logf("deleting queue %s: %v", sp.DeadLetterQueueName(), err)
			}
		}
	}
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// QueueName returns a queue name unique to this run made from t's name:
// letters, digits, '-' and '_', short enough for a "-dlq.fifo" suffix
// within SQS's 80 characters.
func QueueName(t testing.TB) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	base := unsafeChars.ReplaceAllString(t.Name(), "-")
	tail := "-" + hex.EncodeToString(r[:])
	if room := 80 - len(tail) - len("-dlq.fifo"); len(base) > room {
		base = base[len(base)-room:]
	}
	return base + tail
}

// closeAll closes a queue's mailboxes.
func closeAll(q mailboxtest.Queue) {
	for _, mb := range []sqsloop.Mailbox{q.Mailbox, q.DLQ} {
		if mb != nil {
			_ = mb.Close()
		}
	}
}

// Sleep waits d, or until ctx is done (returning ctx's error): on the
// synctest bubble's clock when called in one, else on the wall clock. For
// sqlmailbox's tests that wait between looks at a condition.
func Sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
