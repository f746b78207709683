package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// mailboxFlags name a queue, the same way in every command: an SQS queue
// by --queue-url (or by --queue, its name, looked up with GetQueueUrl), on
// AWS or on the server --endpoint names; or a queue --queue names in the
// database --mailbox names.
type mailboxFlags struct {
	QueueURL string `name:"queue-url" placeholder:"URL" help:"The SQS queue's URL (credentials and region from the standard AWS chain: AWS_REGION, AWS_PROFILE, instance and task roles; the region defaults to the URL's)."`
	Endpoint string `placeholder:"URL" help:"Base URL of an SQS-compatible server (LocalStack, ElasticMQ, fauxqs: http://127.0.0.1:4566); empty: AWS."`
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

	closers []func() error
}

// Close closes the mailbox and what was opened for it, last opened first.
func (q *queue) Close() error {
	var errs []error
	for i := len(q.closers) - 1; i >= 0; i-- {
		errs = append(errs, q.closers[i]())
	}
	return errors.Join(errs...)
}

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

// open opens the queue the flags name. The queue must exist (create-queue
// makes one).
func (f mailboxFlags) open(ctx context.Context) (*queue, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.Mailbox != "" {
		st, closeDB, err := openStore(ctx, f.Mailbox)
		if err != nil {
			return nil, err
		}
		q := &queue{name: f.Queue, store: st, closers: []func() error{closeDB}}
		mb, err := st.Queue(ctx, f.Queue)
		if err != nil {
			q.Close()
			if errors.Is(err, sqsloop.ErrQueueNotFound) {
				return nil, fmt.Errorf("%w (create it with: sqsloop create-queue --mailbox ... --queue %s)", err, f.Queue)
			}
			return nil, err
		}
		q.mb = mb
		q.closers = append(q.closers, mb.Close)
		return q, nil
	}
	client, err := f.client(ctx)
	if err != nil {
		return nil, err
	}
	u := f.QueueURL
	if u == "" {
		out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(f.Queue)})
		if err != nil {
			return nil, fmt.Errorf("--queue %s: %w", f.Queue, err)
		}
		u = aws.ToString(out.QueueUrl)
	}
	mb, err := sqsmailbox.New(client, u)
	if err != nil {
		return nil, err
	}
	return &queue{name: queueName(u), mb: mb, url: u, sqs: client, closers: []func() error{mb.Close}}, nil
}

// client returns an SQS client for the flags' endpoint, in the region
// of the standard chain or, when it names none, the region of the queue's
// URL (sqs.eu-west-1.amazonaws.com).
func (f mailboxFlags) client(ctx context.Context) (*sqs.Client, error) {
	var opts []func(*config.LoadOptions) error
	if r := urlRegion(f.QueueURL); r != "" {
		opts = append(opts, config.WithDefaultRegion(r))
	}
	return sqsmailbox.NewClient(ctx, f.Endpoint, opts...)
}

// urlRegion returns the region of an SQS queue URL on AWS
// (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME), or "".
func urlRegion(queueURL string) string {
	u, err := url.Parse(queueURL)
	if err != nil {
		return ""
	}
	parts := strings.Split(u.Hostname(), ".")
	if len(parts) >= 4 && parts[0] == "sqs" && parts[2] == "amazonaws" {
		return parts[1]
	}
	return ""
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

// openStore opens the database spec names: "sqlite:PATH" (a new file gets
// the schema) or a postgres:// URL (whose schema migrate must have made).
// The second result closes what it opened.
func openStore(ctx context.Context, spec string) (*sqlmailbox.Store, func() error, error) {
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		st, err := sqlite.Open(ctx, strings.TrimPrefix(spec, "sqlite:"), sqlite.Options{})
		if err != nil {
			return nil, nil, withMigrateHint(err)
		}
		return st, st.Close, nil
	case isPostgres(spec):
		st, err := postgres.Open(ctx, spec, postgres.Options{})
		if err != nil {
			return nil, nil, withMigrateHint(err)
		}
		return st, st.Close, nil
	}
	return nil, nil, fmt.Errorf("--mailbox %q: want sqlite:PATH or a postgres:// URL", redact(spec))
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
