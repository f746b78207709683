package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	_ "github.com/sqsloop/sqsloop/sqlmailbox/postgres" // opens postgres:// queues
	_ "github.com/sqsloop/sqsloop/sqlmailbox/sqlite"   // opens sqlite: queues
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// mailboxFlags name a queue, the same way in every command, and make the
// URL sqsloop.OpenMailbox opens: an SQS queue by --queue-url (or by
// --queue, its name, looked up with GetQueueUrl), on AWS or on the server
// --endpoint names; a queue --queue names in the database --mailbox names;
// or any queue URL the library opens, by --queue-url.
type mailboxFlags struct {
	QueueURL string `name:"queue-url" placeholder:"URL" help:"The queue's URL: an SQS queue's (credentials from the standard AWS chain: AWS_PROFILE, instance and task roles; the region is the URL's), sqs://NAME?region=R, or a database's queue, sqlite:jobs.db?queue=NAME or postgres://...?queue=NAME."`
	Endpoint string `placeholder:"URL" help:"Base URL of an SQS-compatible server (LocalStack, ElasticMQ, fauxqs: http://127.0.0.1:4566); empty: AWS, or the --queue-url's own server."`
	Mailbox  string `placeholder:"sqlite:PATH|postgres://..." help:"A database mailbox instead of SQS: sqlite:PATH (a file) or a postgres:// (postgresql://) URL; name the queue with --queue."`
	Queue    string `placeholder:"NAME" help:"The queue's name: in the --mailbox database, or on SQS (looked up with GetQueueUrl) when --queue-url is not given."`
}

// mailbox is what the commands use of a queue: every mailbox of the
// project (sqsmailbox, sqlmailbox) is all three.
type mailbox interface {
	sqsloop.Mailbox
	sqsloop.AttributesReader
	sqsloop.DeadLetterQueueOpener
}

// queue is one open queue. Its backend fields are set for the mailbox it
// is on: sqs and url on SQS, store in a database.
type queue struct {
	name string
	mb   mailbox

	url string      // SQS: the queue's URL
	sqs *sqs.Client // SQS: for the calls the Mailbox contract lacks

	store *sqlmailbox.Store // a database mailbox
}

// Close closes the mailbox and what was opened for it.
func (q *queue) Close() error { return q.mb.Close() }

// describe names the queue for messages to the user: its URL on SQS, else
// its name (never a PostgreSQL URL, which may hold a password).
func (q *queue) describe() string {
	if q.url != "" {
		return q.url
	}
	return q.name
}

// check reports the flags' conflicts and omissions, naming the flags.
func (f mailboxFlags) check() error {
	switch {
	case f.Mailbox != "" && f.QueueURL != "":
		return errors.New("--mailbox and --queue-url name two queues: give one")
	case f.Mailbox != "" && f.Endpoint != "":
		return errors.New("--endpoint is for SQS; a --mailbox database has none")
	case f.Mailbox != "" && f.Queue == "":
		return errors.New("--mailbox needs --queue NAME")
	case f.Mailbox == "" && f.QueueURL == "" && f.Queue == "":
		return errors.New("no queue: give --queue-url URL (SQS), --queue NAME (SQS, looked up by name), or --mailbox sqlite:PATH|postgres://... with --queue NAME")
	}
	return nil
}

// url is the queue URL the flags make, for sqsloop.OpenMailbox.
func (f mailboxFlags) url() (string, error) {
	var raw string
	params := url.Values{}
	switch {
	case f.Mailbox != "":
		raw = f.Mailbox
		params.Set("queue", f.Queue)
	case f.QueueURL != "":
		raw = f.QueueURL
	default:
		raw = "sqs://" + f.Queue
	}
	if f.Endpoint != "" {
		params.Set("endpoint", f.Endpoint)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s: not a URL", redact(raw))
	}
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// open opens the queue the flags name. The queue must exist (create-queue
// makes one).
func (f mailboxFlags) open(ctx context.Context) (*queue, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	raw, err := f.url()
	if err != nil {
		return nil, err
	}
	opened, err := sqsloop.OpenMailbox(ctx, raw)
	if err != nil {
		if errors.Is(err, sqsloop.ErrQueueNotFound) && f.Mailbox != "" {
			return nil, fmt.Errorf("%w (create it with: sqsloop create-queue --mailbox ... --queue %s)", err, f.Queue)
		}
		return nil, withMigrateHint(err)
	}
	mb, ok := opened.(mailbox)
	if !ok {
		opened.Close()
		return nil, fmt.Errorf("%s: the mailbox (%T) cannot report its attributes or open its dead-letter queue", redact(raw), opened)
	}
	q := &queue{mb: mb}
	switch m := mb.(type) {
	case *sqsmailbox.Mailbox:
		q.url, q.name = m.QueueURL(), queueName(m.QueueURL())
		q.sqs, _ = m.Client().(*sqs.Client)
	case interface {
		Name() string
		Store() *sqlmailbox.Store
	}:
		q.name, q.store = m.Name(), m.Store()
	}
	return q, nil
}

// queueName is the last path segment of a queue URL: the queue's name.
func queueName(queueURL string) string {
	u, err := url.Parse(queueURL)
	if err != nil {
		return queueURL
	}
	p := strings.TrimSuffix(u.Path, "/")
	return p[strings.LastIndex(p, "/")+1:]
}

// openStore opens the database spec names (sqlmailbox.Open: sqlite:PATH,
// a postgres:// URL), for the commands that work on a database rather
// than one queue. The second result closes it.
func openStore(ctx context.Context, spec string) (*sqlmailbox.Store, func() error, error) {
	st, err := sqlmailbox.Open(ctx, spec)
	if err != nil {
		return nil, nil, withMigrateHint(err)
	}
	return st, st.Close, nil
}

// isPostgres reports a PostgreSQL URL.
func isPostgres(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// withMigrateHint adds the command to run to a schema that is missing or
// outdated.
func withMigrateHint(err error) error {
	if errors.Is(err, sqlmailbox.ErrSchemaOutdated) {
		return fmt.Errorf("%w (run: sqsloop migrate --mailbox ...)", err)
	}
	return err
}

// redact hides a URL's password.
func redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.User == nil {
		return spec
	}
	return u.Redacted()
}
