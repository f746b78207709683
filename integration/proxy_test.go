package integration

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// sqsProxy stands between SQS clients and the SQS server, on a loopback
// port of its own: it adds latency to the calls of one operation (a slow
// network), and it can go down (connection refused) and come back on the
// same port (an endpoint outage). Safe for concurrent use; closed when the
// test ends.
type sqsProxy struct {
	t      testing.TB
	addr   string
	target *url.URL

	transport *http.Transport // to the server, without keep-alives: no connection outlives its call
	calls     sync.WaitGroup  // the calls being proxied

	mu      sync.Mutex
	srv     *http.Server
	served  chan struct{} // closed when srv's Serve returned
	latency map[string]time.Duration
}

// newSQSProxy starts a proxy to endpoint.
func newSQSProxy(t testing.TB, endpoint string) *sqsProxy {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &sqsProxy{t: t, addr: ln.Addr().String(), target: target, latency: map[string]time.Duration{},
		transport: http.DefaultTransport.(*http.Transport).Clone()}
	p.transport.DisableKeepAlives = true
	p.serve(ln)
	t.Cleanup(func() {
		p.down()
		p.calls.Wait() // cut off by down: their clients' connections are closed
	})
	return p
}

// URL is the proxy's endpoint, for a client's BaseEndpoint.
func (p *sqsProxy) URL() string { return "http://" + p.addr }

// serve serves on ln. Called with p.mu held, or before p is shared.
func (p *sqsProxy) serve(ln net.Listener) {
	rp := httputil.NewSingleHostReverseProxy(p.target)
	rp.Transport = p.transport
	rp.ErrorLog = log.New(io.Discard, "", 0) // calls cut off by down are expected
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.calls.Add(1)
		defer p.calls.Done()
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
		p.mu.Lock()
		d := p.latency[op]
		p.mu.Unlock()
		if d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-r.Context().Done(): // the client gave up: the call never reaches the server
				timer.Stop()
				return
			}
		}
		rp.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	p.srv, p.served = srv, served
	go func() { defer close(served); _ = srv.Serve(ln) }()
}

// slow adds d to every call of op ("DeleteMessageBatch", "ReceiveMessage",
// …; the SDK's X-Amz-Target without "AmazonSQS."); 0 removes it.
func (p *sqsProxy) slow(op string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency[op] = d
}

// down closes the proxy's port and every connection through it: calls fail
// with "connection refused" until up.
func (p *sqsProxy) down() {
	p.mu.Lock()
	srv, served := p.srv, p.served
	p.srv = nil
	p.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
		<-served
	}
}

// up listens on the proxy's port again.
func (p *sqsProxy) up() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment after Close
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("proxy: listening on %s again: %v", p.addr, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serve(ln)
}

// proxiedQueue creates a queue on the shared SQS server (skipping t as
// sqsServerHarness does when there is none) and returns a proxy in front
// of the server, a mailbox of the queue whose calls go through the proxy,
// and one whose calls go straight to the server (to look at the queue past
// the proxy). Everything is closed and deleted when t ends.
func proxiedQueue(t *testing.T) (p *sqsProxy, through, direct sqsloop.Mailbox) {
	t.Helper()
	h := sqsServerHarness(t)
	srv := sqsServer(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: longLease})
	t.Cleanup(cleanup)
	p = newSQSProxy(t, srv.Endpoint)
	client, err := srv.NewClient(ctx, func(o *sqs.Options) { o.BaseEndpoint = aws.String(p.URL()) })
	if err != nil {
		t.Fatal(err)
	}
	mb, err := sqsmailbox.New(client, q.Mailbox.(*sqsmailbox.Mailbox).QueueURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mb.Close() })
	return p, mb, q.Mailbox
}
