package sqlmailbox

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/openurl"
)

// stores are the openers Register registered, by scheme.
var stores = struct {
	sync.RWMutex
	open map[string]func(context.Context, *url.URL) (*Store, error)
}{open: map[string]func(context.Context, *url.URL) (*Store, error){}}

// Register makes Open open the database URLs of scheme with open, and
// sqsloop.OpenMailbox the queue URLs of scheme (a database URL with a
// queue parameter, ?queue=NAME); the database packages call it from their
// init functions (sqlmailbox/sqlite: sqlite; sqlmailbox/postgres:
// postgres, postgresql), so a program compiles the drivers it imports,
// no other. open gets the URL without the queue parameter and returns the
// Store, which its caller closes. It panics as sqsloop.RegisterMailbox
// does: a program bug. Safe for concurrent use.
func Register(scheme string, open func(ctx context.Context, u *url.URL) (*Store, error)) {
	stores.Lock()
	defer stores.Unlock()
	if _, dup := stores.open[scheme]; dup || open == nil {
		panic(fmt.Sprintf("sqlmailbox: Register(%q): registered twice, or a nil opener", scheme))
	}
	stores.open[scheme] = open
	sqsloop.RegisterMailbox(scheme, openQueueURL)
}

// Open opens the Store of the database rawURL names, with the opener of
// its scheme (Register): sqlite:jobs.db, sqlite:///var/lib/jobs.db
// (package sqlmailbox/sqlite; a new file gets the schema), or
// postgres://user:pass@host:5432/db?sslmode=disable (package
// sqlmailbox/postgres, whose schema must be migrated). The caller closes
// the Store.
//
// Errors: one wrapping sqsloop.ErrInvalidArgument for a URL that does not
// parse or whose scheme no imported package registered, and the opener's
// (ErrSchemaOutdated, ErrNotADatabase, the database's). The URL's password
// never appears in an error.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("sqlmailbox: Open: not a URL: %w", sqsloop.ErrInvalidArgument)
	}
	stores.RLock()
	open, ok := stores.open[u.Scheme]
	stores.RUnlock()
	if !ok {
		return nil, fmt.Errorf("sqlmailbox: Open: %s: no database registered for the scheme %q (import _ \"github.com/sqsloop/sqsloop/sqlmailbox/sqlite\" or .../postgres): %w",
			u.Redacted(), u.Scheme, sqsloop.ErrInvalidArgument)
	}
	return open(ctx, u)
}

// openQueueURL opens the queue a database URL's queue parameter names
// (sqsloop.OpenMailbox), in a Store opened for it alone, which the
// Mailbox's Close closes.
func openQueueURL(ctx context.Context, u *url.URL) (sqsloop.Mailbox, error) {
	q := openurl.Parse(u)
	name := q.String("queue")
	if name == "" {
		return nil, fmt.Errorf("sqlmailbox: %s: name the queue: ?queue=NAME: %w", u.Redacted(), sqsloop.ErrInvalidArgument)
	}
	stores.RLock()
	open := stores.open[u.Scheme]
	stores.RUnlock()
	st, err := open(ctx, q.Without())
	if err != nil {
		return nil, err
	}
	mb, err := st.Queue(ctx, name)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return ownedMailbox{mb}, nil
}

// ownedMailbox is a Mailbox whose Store was opened for it alone: its Close
// closes the Store too.
type ownedMailbox struct{ *Mailbox }

// Close closes the Mailbox, then its Store.
func (m ownedMailbox) Close() error { return errors.Join(m.Mailbox.Close(), m.s.Close()) }

// Store returns the Store the Mailbox is a queue of: for what the Mailbox
// contract lacks (PurgeQueue, Audit, LeaseStats), also on a queue opened
// from a URL (sqsloop.OpenMailbox). Safe for concurrent use.
func (m *Mailbox) Store() *Store { return m.s }
