package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/sqsloop/sqsloop/console"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// The environment variables of the console's credentials: read from the
// environment only, never from a flag (a command line is visible to every
// user of the machine).
const (
	envConsoleToken    = "SQSLOOP_CONSOLE_TOKEN"
	envConsoleUser     = "SQSLOOP_CONSOLE_USER"
	envConsolePassword = "SQSLOOP_CONSOLE_PASSWORD"
)

// consoleCmd is `sqsloop console`.
type consoleCmd struct {
	Listen         string        `default:"127.0.0.1:8080" placeholder:"HOST:PORT" help:"Serve the console here. A non-loopback address needs credentials in the environment (SQSLOOP_CONSOLE_TOKEN, or SQSLOOP_CONSOLE_USER and SQSLOOP_CONSOLE_PASSWORD)."`
	Endpoint       string        `placeholder:"URL" help:"Base URL of an SQS-compatible server (LocalStack, ElasticMQ, fauxqs: http://127.0.0.1:4566); empty: AWS."`
	Region         string        `placeholder:"REGION" help:"The AWS region of the queues (default: the standard chain's, AWS_REGION)."`
	QueuePrefix    string        `placeholder:"PREFIX" help:"On SQS, show the queues whose names start with PREFIX (ListQueues' QueueNamePrefix); empty: every queue."`
	Mailbox        string        `placeholder:"sqlite:PATH|postgres://..." help:"The queues of a database mailbox instead of SQS: sqlite:PATH or a postgres:// URL."`
	Worker         []string      `sep:"none" placeholder:"URL" help:"A worker's lease page (sqsloop exec/http --metrics-addr: http://HOST:PORT/debug/sqsloop), repeatable: the workers page merges them, and drains and resumes each (its /drain endpoint on the same host)."`
	ReadOnly       bool          `help:"Hide and refuse every action: redrive, delete, export, looking at an SQS queue with a redrive policy, drain and resume."`
	Journal        string        `placeholder:"FILE" help:"Append every action's start, progress and end to FILE as JSON lines; at start, show those a killed console left unfinished, with how far they got."`
	SampleInterval time.Duration `placeholder:"DURATION" help:"Read every queue's counts this often for the charts, 1s-10m (0: 30s; on SQS each read is one GetQueueAttributes call per queue)."`
	Hold           time.Duration `placeholder:"DURATION" help:"On SQS, hold each message a look or an action has read hidden this long (extended while it runs), 10s-12h (0: 1m): a killed console leaves them hidden no longer."`
}

// Help is console's long help.
func (c *consoleCmd) Help() string {
	return `Serves a web console of the queues: their counts and a chart of the last hour; the messages of a queue or a
dead-letter queue, filtered by body, JSON path, message attribute, receive count, age or message group; one
message whole, with its history in a database; "all matching" redriven to their source or another queue at a
chosen rate, deleted, or exported as JSON lines, each action counted first and logged (who, what, how many);
and, for a database, the messages in flight and their receivers, or the lease pages of --worker processes,
which it can drain and resume.

In a database the console reads messages without receiving them. On SQS there is no such read: looking at a
queue receives each of its messages once (holding it hidden until the look ends, then giving it back), which
counts toward a redrive policy's maxReceiveCount. The console browses dead-letter queues freely, and says so
before the first look at a queue with a redrive policy.

It answers loopback clients only, unless --listen names another address, which needs credentials from the
environment: SQSLOOP_CONSOLE_TOKEN (a bearer token), or SQSLOOP_CONSOLE_USER and SQSLOOP_CONSOLE_PASSWORD
(basic authentication, what a browser asks for). Every form carries a CSRF token; --read-only hides and
refuses every action. It stops on SIGTERM or SIGINT, cancelling the actions under way: each gives back what
it holds and logs exactly how many messages it moved.

Examples:

  sqsloop console --queue-prefix orders                                    # SQS, http://127.0.0.1:8080
  sqsloop console --endpoint http://127.0.0.1:4566 --listen 127.0.0.1:9000
  sqsloop console --mailbox sqlite:jobs.db --journal console.jsonl
  SQSLOOP_CONSOLE_TOKEN=$(openssl rand -hex 16) sqsloop console --listen 0.0.0.0:8080 --read-only
  sqsloop console --worker http://10.0.0.5:9464/debug/sqsloop --worker http://10.0.0.6:9464/debug/sqsloop`
}

// Validate checks console's flags.
func (c *consoleCmd) Validate() error {
	if c.Mailbox != "" && (c.Endpoint != "" || c.Region != "" || c.QueuePrefix != "") {
		return errors.New("--endpoint, --region and --queue-prefix are for SQS; a --mailbox database has none")
	}
	_, err := c.auth(os.Getenv)
	return err
}

// auth returns the credentials the environment gives, and refuses a
// non-loopback --listen without any.
func (c *consoleCmd) auth(getenv func(string) string) (console.Auth, error) {
	a := console.Auth{Username: getenv(envConsoleUser), Password: getenv(envConsolePassword), BearerToken: getenv(envConsoleToken)}
	if (a.Username == "") != (a.Password == "") {
		return a, fmt.Errorf("%s and %s go together: set both, or neither", envConsoleUser, envConsolePassword)
	}
	loop, err := loopbackAddr(c.Listen)
	if err != nil {
		return a, err
	}
	if !loop && a.Username == "" && a.BearerToken == "" {
		return a, fmt.Errorf("refusing to serve the console on %s without credentials: anyone who reaches it could move and delete messages; "+
			"set %s (a bearer token) or %s and %s (basic authentication), or listen on a loopback address (127.0.0.1:8080)",
			c.Listen, envConsoleToken, envConsoleUser, envConsolePassword)
	}
	return a, nil
}

// loopbackAddr reports whether a listen address is a loopback one
// (127.0.0.1:8080, [::1]:8080, localhost:8080); ":8080" and 0.0.0.0 listen
// on every interface.
func loopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--listen %q: want HOST:PORT: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback(), nil
}

// Run serves the console until the first SIGTERM or SIGINT.
func (c *consoleCmd) Run(g *globals) error {
	auth, err := c.auth(os.Getenv)
	if err != nil {
		return err
	}
	opts := console.Options{ReadOnly: c.ReadOnly, Auth: auth, Logger: g.log, Journal: c.Journal, SampleInterval: c.SampleInterval, Hold: c.Hold}
	for _, w := range c.Worker {
		opts.Workers = append(opts.Workers, console.Worker{LeasePage: w})
	}
	var con *console.Console
	if c.Mailbox != "" {
		st, closeDB, err := openStore(g.ctx, c.Mailbox)
		if err != nil {
			return err
		}
		defer closeDB()
		con, err = console.NewDatabase(st, opts)
		if err != nil {
			return err
		}
	} else {
		var lo []func(*config.LoadOptions) error
		if c.Region != "" {
			lo = append(lo, config.WithRegion(c.Region))
		}
		client, err := sqsmailbox.NewClient(g.ctx, c.Endpoint, lo...)
		if err != nil {
			return err
		}
		con, err = console.NewSQS(client, c.QueuePrefix, opts)
		if err != nil {
			return err
		}
	}
	defer con.Close()
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{Handler: con, ReadHeaderTimeout: 10 * time.Second}
	where := "SQS"
	if c.Mailbox != "" {
		where = "database " + redact(c.Mailbox)
	}
	fmt.Fprintf(g.stdout, "http://%s/\n", ln.Addr())
	g.log.Info("sqsloop console: serving", "url", "http://"+ln.Addr().String()+"/", "queues", where, "read_only", c.ReadOnly,
		"auth", auth.Username != "" || auth.BearerToken != "")
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-g.ctx.Done():
	}
	g.log.Info("sqsloop console: stopping; cancelling the actions under way")
	err = con.Close() // first: an export streaming to a client ends with it
	ctx, cancel := context.WithTimeout(context.WithoutCancel(g.ctx), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(ctx); serr != nil {
		err = errors.Join(err, serr)
	}
	<-served
	return err
}
