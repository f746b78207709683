package jobstate

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/sqsloop/sqsloop"
)

// OpenedStore is a Store opened from a URL (Open): Close releases what was
// opened for it (a database's connections), and returns its error.
type OpenedStore interface {
	Store
	Close() error
}

// openers are the openers Register registered, by scheme.
var openers = struct {
	sync.RWMutex
	open map[string]func(context.Context, *url.URL) (OpenedStore, error)
}{open: map[string]func(context.Context, *url.URL) (OpenedStore, error){"mem": openMemory}}

// storePackages names the package that registers each scheme of the
// project's stores, for the error of a scheme no import registered.
var storePackages = map[string]string{
	"sqlite":     "github.com/sqsloop/sqsloop/jobstate/sqlitestate",
	"postgres":   "github.com/sqsloop/sqsloop/jobstate/pgstate",
	"postgresql": "github.com/sqsloop/sqsloop/jobstate/pgstate",
	"dynamodb":   "github.com/sqsloop/sqsloop/jobstate/dynamostore",
}

// Register makes Open open the URLs of scheme (lower case, without ":")
// with open, as database/sql.Register does for a driver: each store
// package registers its schemes from its init function, so a program
// opens the stores of the packages it imports (a blank import when it
// names none of their identifiers) and compiles no other driver. It panics
// when scheme is empty, upper case or registered already, or open is nil:
// a program bug, found as it starts. Safe for concurrent use.
func Register(scheme string, open func(ctx context.Context, u *url.URL) (OpenedStore, error)) {
	if scheme == "" || scheme != strings.ToLower(scheme) || open == nil {
		panic(fmt.Sprintf("jobstate: Register(%q): want a lower-case scheme and a non-nil opener", scheme))
	}
	openers.Lock()
	defer openers.Unlock()
	if _, dup := openers.open[scheme]; dup {
		panic(fmt.Sprintf("jobstate: Register: scheme %q registered twice", scheme))
	}
	openers.open[scheme] = open
}

// Open opens the Store rawURL names, with the opener its scheme's package
// registered (Register), for checkpoints and idempotency:
//
//   - mem:// or mem://NAME: a Memory of the process, the same for every
//     open of one NAME (here);
//   - sqlite:state.db or sqlite:///var/lib/app/state.db (package
//     jobstate/sqlitestate: tables of its own, created in a new file);
//   - postgres://user:pass@host/db (package jobstate/pgstate; the schema
//     must be migrated: pgstate.Migrate);
//   - dynamodb://TABLE?region=eu-west-1&endpoint=http://127.0.0.1:8000
//     (package jobstate/dynamostore; the table must exist:
//     dynamostore.CreateTable).
//
// The caller closes the store. Errors: one wrapping
// sqsloop.ErrInvalidArgument for a URL that does not parse, has no
// scheme, or a scheme no imported package registered (naming the package
// to import), and the opener's. The URL's password never appears in an
// error.
func Open(ctx context.Context, rawURL string) (OpenedStore, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("jobstate: Open: not a URL: %w", sqsloop.ErrInvalidArgument)
	}
	openers.RLock()
	open, ok := openers.open[u.Scheme]
	schemes := make([]string, 0, len(openers.open))
	for s := range openers.open {
		schemes = append(schemes, s)
	}
	openers.RUnlock()
	if !ok {
		slices.Sort(schemes)
		hint := ""
		if pkg, known := storePackages[u.Scheme]; known {
			hint = fmt.Sprintf(" (import _ %q)", pkg)
		}
		return nil, fmt.Errorf("jobstate: Open: %s: no store registered for the scheme %q%s; registered: %s: %w",
			u.Redacted(), u.Scheme, hint, strings.Join(schemes, ", "), sqsloop.ErrInvalidArgument)
	}
	return open(ctx, u)
}

// memories are the Memory stores of mem:// URLs, by name.
var memories = struct {
	sync.Mutex
	byName map[string]*Memory
}{byName: map[string]*Memory{}}

// openMemory opens mem://NAME: the process's Memory of that name (mem://
// alone is the one named ""). It has no parameter.
func openMemory(_ context.Context, u *url.URL) (OpenedStore, error) {
	if u.RawQuery != "" || (u.Path != "" && u.Path != "/") || u.Opaque != "" {
		return nil, fmt.Errorf("jobstate: %s: want mem:// or mem://NAME, without a path or parameters: %w", u.Redacted(), sqsloop.ErrInvalidArgument)
	}
	memories.Lock()
	defer memories.Unlock()
	m := memories.byName[u.Host]
	if m == nil {
		m = &Memory{}
		memories.byName[u.Host] = m
	}
	return memoryStore{m}, nil
}

// memoryStore is a Memory opened from a URL; closing it keeps its records
// for the next open.
type memoryStore struct{ *Memory }

// Close does nothing: the records stay for the process's next open.
func (memoryStore) Close() error { return nil }
