package harness

import (
	"context"
	"net"
	"net/http"
	"sync"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// ConnTracker records the connections SQS clients dial, so that they can be
// closed at the end of a test: their goroutines (net/http's persistConn read
// and write loops) would otherwise outlive it and fail goleak. The SDK's HTTP
// client (awshttp.BuildableClient) clones its transport at every change and
// at first use and has no CloseIdleConnections, so the transport it sends on
// cannot be reached from outside; its dial function is copied along, and
// can. The zero value is ready to use; safe for concurrent use. A
// ConnTracker must not be copied after first use.
type ConnTracker struct {
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

// Track is an sqs.Options function (sqs.New(client.Options(), ct.Track)): on
// the client's resolved BuildableClient, it wraps the transport's dial
// function so every new connection is recorded until it is closed. The SDK's
// own dialer, timeouts, CA bundle and redirect policy stay as they are. A
// client with another HTTP client is left as it is.
func (ct *ConnTracker) Track(o *sqs.Options) {
	bc, ok := o.HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		return
	}
	o.HTTPClient = bc.WithTransportOptions(func(tr *http.Transport) {
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tc := &trackedConn{Conn: c, ct: ct}
			ct.mu.Lock()
			if ct.conns == nil {
				ct.conns = map[*trackedConn]struct{}{}
			}
			ct.conns[tc] = struct{}{}
			ct.mu.Unlock()
			return tc, nil
		}
	})
}

// CloseAll closes every recorded connection still open. The clients stay
// usable: they dial again (and record) on their next call.
func (ct *ConnTracker) CloseAll() {
	ct.mu.Lock()
	open := make([]*trackedConn, 0, len(ct.conns))
	for c := range ct.conns {
		open = append(open, c)
	}
	ct.mu.Unlock()
	for _, c := range open {
		_ = c.Close()
	}
}

// trackedConn is a connection a ConnTracker recorded; Close forgets it.
type trackedConn struct {
	net.Conn
	ct *ConnTracker
}

func (c *trackedConn) Close() error {
	c.ct.mu.Lock()
	delete(c.ct.conns, c)
	c.ct.mu.Unlock()
	return c.Conn.Close()
}
