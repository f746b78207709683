package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop/lifecycle"
)

// httpCmd is `sqsloop http`: an HTTP application as the handler, the way
// Elastic Beanstalk's worker daemon (sqsd) drives one.
type httpCmd struct {
	workerFlags `embed:""`

	To             string        `required:"" placeholder:"URL" help:"The application's URL: each message is POSTed there."`
	ContentType    string        `default:"application/json" help:"The requests' Content-Type (sqsd's MIME type setting)."`
	PoisonStatus   int           `placeholder:"CODE" help:"An HTTP status (100-599, e.g. 422) that sends the message to the dead-letter queue at once, instead of retrying it. 0: none."`
	BeatAddr       string        `default:"127.0.0.1:0" help:"Where the beat endpoint listens (port 0: any free port); each request names its message's beat URL in X-Sqsloop-Beat-Url."`
	ConnectTimeout time.Duration `default:"5s" help:"How long to wait for a connection to the application."`
}

// Help is http's long help.
func (c *httpCmd) Help() string {
	return `POST each message's body to the application, with Elastic Beanstalk's worker daemon's (sqsd's) headers:
X-Aws-Sqsd-Msgid, X-Aws-Sqsd-Queue, X-Aws-Sqsd-First-Received-At (UTC, ISO 8601), X-Aws-Sqsd-Receive-Count,
X-Aws-Sqsd-Attr-<name> for each String and Number message attribute, User-Agent aws-sqsd/1.1 (sqsloop),
X-Amzn-Trace-Id when the message has an AWSTraceHeader; and X-Sqsloop-Beat-Url, X-Sqsloop-Message-Group-Id.

200 OK (with the whole response read) acks the message; any other status, a refused connection or a
response cut short nacks it, to be retried after a back-off (1s doubling to 5m; a Retry-After header sets
the delay) until the queue's max receive count moves it to the dead-letter queue; --poison-status moves it
there at once. Unlike sqsd, the lease is extended while the application shows it is alive: each chunk of
a streamed response is a heartbeat, and so is a POST to the message's beat URL (X-Sqsloop-Beat-Url,
http://127.0.0.1:PORT/beat/MESSAGE_ID: 204, or 404 once the message is no longer in flight). An
application that does neither for longer than the lease loses the message: its request is cancelled
(the connection closed) and another worker gets it. Receiving starts once the application accepts
connections. On SIGTERM or SIGINT it drains: requests in flight get --shutdown-timeout to finish. Exit
status as exec's: 0 after a drain within --shutdown-timeout, 1 when it ran out (requests cancelled, their
messages given back) or the queue failed, 130 or 143 after a second signal.

Examples:

  sqsloop http --queue-url https://sqs.eu-west-1.amazonaws.com/123456789012/jobs --to http://127.0.0.1:8080/work
  sqsloop http --queue-url URL --to http://localhost/ --concurrency 50 --visibility-timeout 300s   # sqsd's defaults`
}

// Validate checks http's own flags.
func (c *httpCmd) Validate() error {
	errs := []error{c.workerFlags.check()}
	if c.PoisonStatus != 0 && (c.PoisonStatus < 100 || c.PoisonStatus > 599 || c.PoisonStatus == 200) {
		errs = append(errs, fmt.Errorf("--poison-status: want an HTTP status 100-599 other than 200 (or 0 for none), got %d", c.PoisonStatus))
	}
	if _, err := checkTarget(c.To); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run consumes the queue, POSTing each message to the application, until a
// signal drains it (or --exit-when-idle).
func (c *httpCmd) Run(g *globals) error {
	target, err := checkTarget(c.To)
	if err != nil {
		return err
	}
	beats, beatLoop, ln, err := listenBeats(c.BeatAddr)
	if err != nil {
		return err
	}
	defer ln.Close() // closed already when the group ran its server
	p := &pusher{
		to:           c.To,
		contentType:  c.ContentType,
		poisonStatus: c.PoisonStatus,
		client:       newPushClient(c.Concurrency, c.ConnectTimeout),
		beats:        beats,
		log:          g.log,
	}
	defer p.client.CloseIdleConnections()
	return c.workerFlags.run(g, "http", func(q *queue) (handlerRun, error) {
		p.queue = q.name
		if err := waitForApp(g.ctx, target, c.ConnectTimeout, g.log); err != nil {
			return handlerRun{}, err
		}
		return handlerRun{handle: p.handle, loops: map[string]lifecycle.Runnable{"beats": beatLoop}}, nil
	})
}
