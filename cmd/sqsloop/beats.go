package main

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// beatPath is the beat endpoint's route: POST it with a message ID in
// flight to beat that message's heartbeat.
const beatPath = "/beat/"

// beatRegistry is the beat endpoint of `sqsloop http`: the heartbeats of
// the messages in flight, by message ID, and the HTTP handler that beats
// them. Safe for concurrent use.
type beatRegistry struct {
	base string // "http://127.0.0.1:PORT"

	mu    sync.Mutex
	beats map[string]*heartbeat.Heartbeat
}

// listenBeats listens on addr for the beat endpoint; the loop serves it,
// and the caller closes the listener once it is done with both.
func listenBeats(addr string) (*beatRegistry, lifecycle.Runnable, net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--beat-addr: %w", err)
	}
	b := &beatRegistry{base: "http://" + reachable(ln.Addr()), beats: map[string]*heartbeat.Heartbeat{}}
	mux := http.NewServeMux()
	mux.Handle("POST "+beatPath+"{id}", b)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return b, lifecycle.HTTPServer(srv, ln), ln, nil
}

// reachable is the address a local client dials for a listener's: the
// loopback address for a listener on every interface.
func reachable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

// url is the beat URL of the message id.
func (b *beatRegistry) url(id string) string { return b.base + beatPath + url.PathEscape(id) }

// add registers hb as the heartbeat of the message id until the function
// it returns is called. A second message with one ID (redelivered while
// the first run still ends) takes the ID over.
func (b *beatRegistry) add(id string, hb *heartbeat.Heartbeat) (remove func()) {
	b.mu.Lock()
	b.beats[id] = hb
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		if b.beats[id] == hb {
			delete(b.beats, id)
		}
		b.mu.Unlock()
	}
}

// ServeHTTP beats the heartbeat of the message POST /beat/{id} names: 204
// No Content, or 404 Not Found when no such message is in flight here (its
// run has ended, or its lease was lost).
func (b *beatRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b.mu.Lock()
	hb := b.beats[id]
	b.mu.Unlock()
	if hb == nil {
		http.Error(w, "no message "+id+" in flight", http.StatusNotFound)
		return
	}
	hb.Beat()
	w.WriteHeader(http.StatusNoContent)
}
