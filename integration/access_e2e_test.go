package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// deniedOp is an SQS operation a test denies, by its JSON-protocol name
// (X-Amz-Target "AmazonSQS.<name>") and the IAM action SQS names in the
// message.
type deniedOp struct{ name, action string }

var (
	denyReceive = deniedOp{"ReceiveMessage", "sqs:receivemessage"}
	denyDelete  = deniedOp{"DeleteMessageBatch", "sqs:deletemessage"}
)

// denyTransport answers every request for one operation as SQS answers a
// caller without the permission: HTTP 400, an AccessDeniedException body
// and the query-compatible code AccessDenied in x-amzn-query-error. Other
// requests go on to base. calls counts the denied requests.
type denyTransport struct {
	base  http.RoundTripper
	op    deniedOp
	calls atomic.Int64
}

func (d *denyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("X-Amz-Target") != "AmazonSQS."+d.op.name {
		return d.base.RoundTrip(req)
	}
	d.calls.Add(1)
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	body := fmt.Sprintf(`{"__type":"com.amazon.coral.service#AccessDeniedException","message":"User is not authorized to perform: %s"}`, d.op.action)
	return &http.Response{
		Status:     "400 Bad Request",
		StatusCode: http.StatusBadRequest,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header: http.Header{
			"Content-Type":       {"application/x-amz-json-1.0"},
			"X-Amzn-Query-Error": {"AccessDenied;Sender"},
			"X-Amzn-Requestid":   {"00000000-0000-0000-0000-000000000000"},
		},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// deniedMemMailbox fails every call of one operation (Receive or Delete)
// with an error wrapping sqsloop.ErrAccessDenied, as sqsmailbox reports an
// AccessDenied answer; calls counts them.
type deniedMemMailbox struct {
	sqsloop.Mailbox
	op    deniedOp
	calls atomic.Int64
}

func (m *deniedMemMailbox) denied() error {
	m.calls.Add(1)
	return fmt.Errorf("memtest: %s: User is not authorized to perform: %s: %w", m.op.name, m.op.action, sqsloop.ErrAccessDenied)
}

func (m *deniedMemMailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	if m.op == denyReceive {
		return nil, m.denied()
	}
	return m.Mailbox.Receive(ctx, req)
}

func (m *deniedMemMailbox) Delete(ctx context.Context, receiptHandles []string) ([]error, error) {
	if m.op == denyDelete {
		return nil, m.denied()
	}
	return m.Mailbox.Delete(ctx, receiptHandles)
}

// deniedMailbox returns a mailbox of q on which op is denied, and a count
// of the denied calls. On memmailbox it is deniedMemMailbox; on a real
// server an sqsmailbox whose SQS client goes through denyTransport, so the
// denial is on the wire and sqsmailbox maps it. The mailbox is closed at
// the end of the test.
func deniedMailbox(ctx context.Context, t *testing.T, h mailboxtest.Harness, q mailboxtest.Queue, op deniedOp) (sqsloop.Mailbox, func() int64) {
	t.Helper()
	if _, ok := h.(*harness.SQS); !ok {
		mb := &deniedMemMailbox{Mailbox: q.Mailbox, op: op}
		return mb, mb.calls.Load
	}
	// The server's client as NewClient builds it, whose own transport
	// (AWS_CA_BUNDLE applied, its connections closed with the server) sits
	// behind denyTransport.
	var dt *denyTransport
	client, err := sqsServer(t).NewClient(ctx, func(o *sqs.Options) {
		bc, ok := o.HTTPClient.(*awshttp.BuildableClient)
		if !ok {
			t.Fatalf("the SQS client's HTTP client is a %T, want the SDK's *awshttp.BuildableClient", o.HTTPClient)
		}
		base := bc.GetTransport()
		t.Cleanup(base.CloseIdleConnections)
		dt = &denyTransport{base: base, op: op}
		o.HTTPClient = &http.Client{Transport: dt}
	})
	if err != nil {
		t.Fatal(err)
	}
	mb, err := sqsmailbox.New(client, q.Mailbox.(*sqsmailbox.Mailbox).QueueURL())
	if err != nil {
		t.Fatalf("sqsmailbox.New: %v", err)
	}
	t.Cleanup(func() { _ = mb.Close() })
	return mb, dt.calls.Load
}

// notOnSQL is why the access scenarios skip sqlmailbox.
const notOnSQL = "the denial would come from a wrapper (deniedMemMailbox), not from sqlmailbox, so a pass would say nothing of it; " +
	"sqlmailbox's own tests check that it reports PostgreSQL's permission errors as sqsloop.ErrAccessDenied"

// Bounds of the access scenarios.
const (
	// maxDeniedReceives is how many denied receives may reach the queue
	// before Run gives up.
	maxDeniedReceives = 20
	// accessPatience bounds the wait for Run to give up.
	accessPatience = 20 * time.Second
)

// awaitRunOrCond waits up to d for Run's result on runDone, or until stop
// holds; returned says whether Run returned.
func awaitRunOrCond(ctx context.Context, h mailboxtest.Harness, runDone <-chan error, d time.Duration, stop func() bool) (err error, returned bool) {
	waitUntil(ctx, h, d, 50*time.Millisecond, func() bool {
		if returned {
			return true
		}
		select {
		case err = <-runDone:
			returned = true
			return true
		default:
			return stop()
		}
	})
	return err, returned
}

// A consumer that may not receive stops trying: after a few consecutive
// receives answered AccessDenied (fewer than 20 reach the queue), Run
// returns an error wrapping sqsloop.ErrAccessDenied and Ready() reports it.
// On a real server the denial is on the wire (HTTP 400, x-amzn-query-error
// AccessDenied;Sender), so sqsmailbox's mapping is tested too. Not on
// sqlmailbox (notOnSQL).
//
// Guards the bug where access and credential errors were retried forever,
// with the consumer reporting itself running.
func TestE2EAccessDeniedOnReceiveEndsRun(t *testing.T) {
	t.Parallel()
	skipSQLBackends(t, notOnSQL)
	forEachSQSBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: shortLease})
		defer cleanup()
		mailboxtest.SendBodies(ctx, t, q.Mailbox, "job")
		mb, denied := deniedMailbox(ctx, t, h, q, denyReceive)

		var runs atomic.Int64
		c, err := consumer.New(mb, func(context.Context, *sqsloop.Message) error { runs.Add(1); return nil }, e2eConfig())
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		cancel, runDone := startRun(t, c)
		runErr, returned := awaitRunOrCond(ctx, h, runDone, accessPatience, func() bool { return denied() >= maxDeniedReceives })
		took := time.Since(began)
		if !returned {
			t.Errorf("%s: Run still running after %v and %d denied receives (Ready() = %v); cancelling it",
				h.Name(), took.Round(time.Millisecond), denied(), c.Ready())
			cancel()
			runErr = <-runDone
		}
		t.Logf("%s: Run returned after %v, %d denied receives: %v; stats %+v", h.Name(), took.Round(time.Millisecond), denied(), runErr, c.Stats())
		if !returned || !errors.Is(runErr, sqsloop.ErrAccessDenied) {
			t.Errorf("%s: Run returned %v, want an error wrapping sqsloop.ErrAccessDenied", h.Name(), runErr)
		}
		if n := denied(); n >= maxDeniedReceives {
			t.Errorf("%s: %d denied receives reached the queue, want fewer than %d", h.Name(), n, maxDeniedReceives)
		}
		if c.Ready() == nil {
			t.Errorf("%s: Ready() is nil after Run returned", h.Name())
		}
		if n := runs.Load(); n != 0 {
			t.Errorf("%s: the handler ran %d times with every receive denied", h.Name(), n)
		}
	})
}

// A consumer that may not delete stops instead of running every message
// again each visibility timeout: messages are handled, their acks are
// answered AccessDenied, and Run returns an error wrapping
// sqsloop.ErrAccessDenied with each message run at most twice. Nothing is
// lost: every message is still in the queue afterwards. On a real server
// the denial is on the wire (DeleteMessageBatch answered HTTP 400,
// AccessDenied). Not on sqlmailbox (notOnSQL).
//
// Guards the bug where a denied ack was logged and dropped, forever: each
// message ran again every visibility timeout.
func TestE2EAccessDeniedOnDeleteEndsRun(t *testing.T) {
	t.Parallel()
	skipSQLBackends(t, notOnSQL)
	forEachSQSBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: shortLease})
		defer cleanup()
		ids := mailboxtest.SendBodies(ctx, t, q.Mailbox, "job-0", "job-1", "job-2", "job-3", "job-4")
		mb, denied := deniedMailbox(ctx, t, h, q, denyDelete)

		runs := newRunLog()
		c, err := consumer.New(mb, runs.handler(func(context.Context) error { return nil }), e2eConfig())
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		cancel, runDone := startRun(t, c)
		runErr, returned := awaitRunOrCond(ctx, h, runDone, accessPatience, func() bool { return false })
		took := time.Since(began)
		if !returned {
			t.Errorf("%s: Run still running after %v and %d denied deletes (Ready() = %v); cancelling it",
				h.Name(), took.Round(time.Millisecond), denied(), c.Ready())
			cancel()
			runErr = <-runDone
		}
		left := leftovers(ctx, t, q.Mailbox, shortLease+2*time.Second)
		fig := runs.figures(ids)
		t.Logf("%s: Run returned after %v, %d denied deletes: %v", h.Name(), took.Round(time.Millisecond), denied(), runErr)
		t.Logf("%s: %s; %d of %d still in the queue; stats %+v", h.Name(), fig, len(left), len(ids), c.Stats())
		if !returned || !errors.Is(runErr, sqsloop.ErrAccessDenied) {
			t.Errorf("%s: Run returned %v, want an error wrapping sqsloop.ErrAccessDenied", h.Name(), runErr)
		}
		if c.Ready() == nil {
			t.Errorf("%s: Ready() is nil after Run returned", h.Name())
		}
		if fig.most > 2 {
			t.Errorf("%s: a message ran %d times, want at most twice", h.Name(), fig.most)
		}
		if fig.total == 0 {
			t.Errorf("%s: no message ran", h.Name())
		}
		if len(left) != len(ids) {
			t.Errorf("%s: %d of the %d messages still in the queue, want all (no delete was allowed)", h.Name(), len(left), len(ids))
		}
	})
}
