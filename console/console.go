package console

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// Defaults of Options.
const (
	// DefaultSampleInterval is how often the console reads every queue's
	// counts for the charts when Options.SampleInterval is 0: 30 s (on
	// SQS, one GetQueueAttributes call per queue each time: 120 an hour
	// per queue).
	DefaultSampleInterval = 30 * time.Second

	// DefaultHold is the visibility timeout of the console's receives on
	// SQS when Options.Hold is 0: 60 s. A scan or an action holds each
	// message it has read (extending the hold while it runs) and gives it
	// back at its end; a console killed meanwhile leaves them hidden for
	// at most this long.
	DefaultHold = time.Minute

	// chartWindow is how far back the charts go: an hour.
	chartWindow = time.Hour
)

// Options configure a Console. The zero Options are valid: the console at
// the root path, answering loopback clients only, actions allowed.
type Options struct {
	// Prefix is the path the console is mounted under ("/console"), which
	// its links carry; "" for the root. It must start with '/' and not
	// end with one. Mount the console there (mux.Handle("/console/", c)):
	// it strips the prefix itself.
	Prefix string

	// ReadOnly hides every action (redrive, delete, export, a look that
	// receives a queue with a redrive policy, drain and resume) and
	// refuses it with 403 Forbidden.
	ReadOnly bool

	// Auth says who may use the console. With none set, it answers
	// loopback clients only (403 Forbidden to others).
	Auth Auth

	// Workers are worker processes whose lease pages (package leasepage)
	// the workers page merges, and which it can drain and resume.
	Workers []Worker

	// Logger receives the action log (who, what, on which messages, how
	// many: a line when each action starts and ends, and every 5 s while
	// it runs); nil means slog.Default().
	Logger *slog.Logger

	// Journal, when set, is a file the console appends every action's
	// start, progress (each batch) and end to, as JSON lines, and reads at
	// New: the actions of a process that died before their end show as
	// interrupted, with the count they had reached.
	Journal string

	// SampleInterval is how often the console reads every queue's counts
	// for the charts, 1 s–10 min; 0 means DefaultSampleInterval (30 s).
	SampleInterval time.Duration

	// Hold is the visibility timeout of the console's receives on SQS,
	// 10 s–12 h; 0 means DefaultHold (60 s).
	Hold time.Duration
}

// Auth says how the console authenticates requests. Set one of Username
// (with Password), BearerToken, or External.
type Auth struct {
	// Username and Password, when set, require HTTP basic authentication
	// (what a browser asks for).
	Username, Password string
	// BearerToken, when set, accepts "Authorization: Bearer TOKEN" (for
	// scripts and proxies), besides basic authentication when that is set
	// too.
	BearerToken string
	// External says the service that mounts the console authenticates
	// every request before it does (its own middleware): the console then
	// answers every client, and Who names the user.
	External bool
	// Who names the user of a request in the action log; nil: the basic
	// authentication user, "bearer token", or the client's address.
	Who func(*http.Request) string
}

func (a Auth) configured() bool { return a.Username != "" || a.BearerToken != "" || a.External }

// Worker is one worker process the workers page shows.
type Worker struct {
	// Name names it on the page; "" means its lease page's host.
	Name string
	// LeasePage is the URL of its lease page (leasepage.Page), read with
	// ?format=json.
	LeasePage string
	// Drain is the URL its drain endpoint (lifecycle.LoopGroup.
	// DrainHandler) is mounted under: POST Drain+"/drain" drains it,
	// Drain+"/resume" resumes it; "" means the lease page's scheme and
	// host (where `sqsloop exec` and `http` serve it).
	Drain string
}

// Console is the operator console: an http.Handler serving its pages,
// which owns a sampler goroutine (the charts) and the actions it runs;
// Close stops them. Safe for concurrent use.
type Console struct {
	opts    Options
	b       backend
	log     *slog.Logger
	tmpl    *template.Template
	key     []byte // signs the CSRF tokens
	jobs    *jobs
	samples *sampler
	mux     *http.ServeMux
	workers []Worker
	http    *http.Client // reads the workers' pages

	ctx    context.Context // the jobs' and the sampler's; Close cancels it
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// NewSQS returns a console of the SQS queues whose names start with
// queuePrefix ("" for every queue of the account and region), called
// through client (a *sqs.Client: sqsmailbox.NewClient).
//
// Errors: opts' problems (wrapping sqsloop.ErrInvalidArgument, naming the
// field), a journal that cannot be read or opened.
func NewSQS(client SQSAPI, queuePrefix string, opts Options) (*Console, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: console: NewSQS: client must not be nil", sqsloop.ErrInvalidArgument)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return newConsole(newSQSBackend(client, queuePrefix, opts.hold()), opts)
}

// NewDatabase returns a console of the queues of a database mailbox's
// Store (sqlite.Open, postgres.Open). It never receives to look: it reads
// messages without touching their receive counts. The caller keeps the
// Store and closes it after the console.
//
// Errors: as NewSQS's.
func NewDatabase(st *sqlmailbox.Store, opts Options) (*Console, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: console: NewDatabase: store must not be nil", sqsloop.ErrInvalidArgument)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return newConsole(&sqlBackend{st: st, since: time.Now()}, opts)
}

// validate returns every problem of o, joined, each naming its field.
func (o Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: console: "+format, append([]any{sqsloop.ErrInvalidArgument}, args...)...))
	}
	if o.Prefix != "" && (!strings.HasPrefix(o.Prefix, "/") || strings.HasSuffix(o.Prefix, "/")) {
		bad("Options.Prefix: must start with '/' and not end with one, got %q", o.Prefix)
	}
	if o.SampleInterval != 0 && (o.SampleInterval < time.Second || o.SampleInterval > 10*time.Minute) {
		bad("Options.SampleInterval: must be 0 (30s) or between 1s and 10m, got %v", o.SampleInterval)
	}
	if o.Hold != 0 && (o.Hold < 10*time.Second || o.Hold > sqsloop.MaxVisibilityTimeout) {
		bad("Options.Hold: must be 0 (1m) or between 10s and 12h, got %v", o.Hold)
	}
	if (o.Auth.Username == "") != (o.Auth.Password == "") {
		bad("Options.Auth: Username and Password go together")
	}
	for i, w := range o.Workers {
		for _, u := range []struct{ name, v string }{{"LeasePage", w.LeasePage}, {"Drain", w.Drain}} {
			if u.v == "" && u.name == "Drain" {
				continue
			}
			if p, err := url.Parse(u.v); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
				bad("Options.Workers[%d].%s: want an http:// or https:// URL, got %q", i, u.name, u.v)
			}
		}
	}
	return errors.Join(errs...)
}

func (o Options) hold() time.Duration {
	if o.Hold == 0 {
		return DefaultHold
	}
	return sqsloop.WholeSeconds(o.Hold)
}

func (o Options) sampleInterval() time.Duration {
	if o.SampleInterval == 0 {
		return DefaultSampleInterval
	}
	return o.SampleInterval
}

func newConsole(b backend, opts Options) (*Console, error) {
	c := &Console{opts: opts, b: b, log: opts.Logger, key: make([]byte, 32), http: &http.Client{Timeout: 5 * time.Second}}
	if c.log == nil {
		c.log = slog.Default()
	}
	_, _ = rand.Read(c.key) // never fails
	c.jobs = &jobs{log: c.log}
	if opts.Journal != "" {
		if err := c.jobs.openJournal(opts.Journal); err != nil {
			return nil, err
		}
	}
	for _, w := range opts.Workers {
		c.workers = append(c.workers, w.withDefaults())
	}
	c.tmpl = parseTemplates()
	c.samples = newSampler(opts.sampleInterval())
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.routes()
	c.wg.Go(func() { c.samples.run(c.ctx, b) })
	return c, nil
}

// Close stops the sampler and cancels the running actions, waiting for
// them: each gives back the messages it holds and records how far it got
// (an interrupted redrive says exactly how many it moved). Later actions
// are refused. It closes the journal; it does not close the Store or the
// SQS client. Idempotent; it returns the journal's error from closing.
func (c *Console) Close() error {
	var err error
	c.once.Do(func() {
		c.cancel()
		err = c.jobs.close()
		c.wg.Wait()
	})
	return err
}
