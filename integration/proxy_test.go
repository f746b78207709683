package integration

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
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

	transport *http.Transport // to the server: its idle connections are closed with the proxy

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
	p.serve(ln)
	t.Cleanup(func() {
		p.down()
		p.transport.CloseIdleConnections()
	})
	return p
}

// URL is the proxy's endpoint, for a client's BaseEndpoint.
func (p *sqsProxy) URL() string { return "http://" + p.addr }

// serve serves on ln. Called with p.mu held, or before p is shared.
func (p *sqsProxy) serve(ln net.Listener) {
	rp := httputil.NewSingleHostReverseProxy(p.target)
	rp.Transport = p.transport
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
