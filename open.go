package sqsloop

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// mailboxURLs are the openers RegisterMailbox registered, by scheme.
var mailboxURLs = struct {
	sync.RWMutex
	open map[string]func(context.Context, *url.URL) (Mailbox, error)
}{open: map[string]func(context.Context, *url.URL) (Mailbox, error){}}

// mailboxPackages names the package that registers each scheme of the
// project's mailboxes, for the error of a scheme no import registered.
var mailboxPackages = map[string]string{
	"mem":        "github.com/sqsloop/sqsloop/memmailbox",
	"sqs":        "github.com/sqsloop/sqsloop/sqsmailbox",
	"http":       "github.com/sqsloop/sqsloop/sqsmailbox",
	"https":      "github.com/sqsloop/sqsloop/sqsmailbox",
	"sqlite":     "github.com/sqsloop/sqsloop/sqlmailbox/sqlite",
	"postgres":   "github.com/sqsloop/sqsloop/sqlmailbox/postgres",
	"postgresql": "github.com/sqsloop/sqsloop/sqlmailbox/postgres",
}

// RegisterMailbox makes OpenMailbox open the URLs of scheme (lower case,
// without ":") with open, as database/sql.Register does for a driver: each
// mailbox package registers its schemes from its init function, so a
// program opens the queues of the packages it imports (with a blank
// import, `import _ "github.com/sqsloop/sqsloop/sqlmailbox/sqlite"`, when
// it names none of their identifiers) and compiles no other. open gets the
// parsed URL; it returns a Mailbox the caller owns and closes (Close
// releases what open opened for it), or an error naming what in the URL
// is wrong. It panics when scheme is empty or registered already, or open
// is nil: a program bug, found as it starts. Safe for concurrent use.
func RegisterMailbox(scheme string, open func(ctx context.Context, u *url.URL) (Mailbox, error)) {
	if scheme == "" || scheme != strings.ToLower(scheme) || open == nil {
		panic(fmt.Sprintf("sqsloop: RegisterMailbox(%q): want a lower-case scheme and a non-nil opener", scheme))
	}
	mailboxURLs.Lock()
	defer mailboxURLs.Unlock()
	if _, dup := mailboxURLs.open[scheme]; dup {
		panic(fmt.Sprintf("sqsloop: RegisterMailbox: scheme %q registered twice", scheme))
	}
	mailboxURLs.open[scheme] = open
}

// OpenMailbox opens the queue rawURL names, with the opener its scheme's
// package registered (RegisterMailbox): configuration is one string, as
// gocloud.dev's pubsub.OpenSubscription and database/sql's Open make it.
// The project's mailboxes open:
//
//   - mem://jobs (package memmailbox): the queue "jobs" in the process's
//     memory, created at its first open (?max_receive_count=5 adds its
//     dead-letter queue jobs-dlq, ?visibility_timeout=30s sets its
//     visibility timeout); every open of it in the process shares it;
//   - an SQS queue URL, https://sqs.eu-west-1.amazonaws.com/123456789012/jobs,
//     or that of an SQS-compatible server (http://127.0.0.1:4566/000000000000/jobs),
//     or sqs://jobs?region=eu-west-1&endpoint=http://127.0.0.1:4566, the
//     queue looked up by name (package sqsmailbox; credentials from the
//     standard AWS chain);
//   - sqlite:///var/lib/app/jobs.db?queue=jobs or sqlite:jobs.db?queue=jobs
//     (a relative path), and postgres://user:pass@host/db?queue=jobs
//     (packages sqlmailbox/sqlite and sqlmailbox/postgres): the queue
//     named in a database, which must exist (sqsloop create-queue makes
//     one).
//
// The caller owns the Mailbox and closes it, which closes what was opened
// for it (a database's connections). It makes the calls its opener needs
// (none for SQS and memory; the database's for the others).
//
// Errors: an error wrapping ErrInvalidArgument for a URL that does not
// parse, has no scheme, or has a scheme no imported package registered
// (naming the package to import when it is one of the project's), and
// the opener's (a parameter it does not know, ErrQueueNotFound, the
// database's). The URL's password never appears in an error.
func OpenMailbox(ctx context.Context, rawURL string) (Mailbox, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("sqsloop: OpenMailbox: %s: not a URL: %w", redactURL(rawURL), ErrInvalidArgument)
	}
	mailboxURLs.RLock()
	open, ok := mailboxURLs.open[u.Scheme]
	schemes := make([]string, 0, len(mailboxURLs.open))
	for s := range mailboxURLs.open {
		schemes = append(schemes, s)
	}
	mailboxURLs.RUnlock()
	switch {
	case u.Scheme == "":
		return nil, fmt.Errorf("sqsloop: OpenMailbox: %s: no scheme; want a URL such as mem://jobs, sqs://jobs, https://sqs.REGION.amazonaws.com/ACCOUNT/jobs, sqlite:jobs.db?queue=jobs or postgres://HOST/DB?queue=jobs: %w",
			u.Redacted(), ErrInvalidArgument)
	case !ok:
		slices.Sort(schemes)
		hint := ""
		if pkg, known := mailboxPackages[u.Scheme]; known {
			hint = fmt.Sprintf(" (import _ %q)", pkg)
		}
		return nil, fmt.Errorf("sqsloop: OpenMailbox: %s: no mailbox registered for the scheme %q%s; registered: %s: %w",
			u.Redacted(), u.Scheme, hint, strings.Join(schemes, ", "), ErrInvalidArgument)
	}
	return open(ctx, u)
}

// redactURL is rawURL for an error message: without its password when it
// parses, else only its scheme.
func redactURL(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		return u.Redacted()
	}
	scheme, _, _ := strings.Cut(rawURL, ":")
	return scheme + ":…"
}
