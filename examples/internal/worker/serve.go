package worker

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// server is the HTTP server of -metrics-addr: the group's health probes
// and the lease page.
type server struct {
	http     *http.Server
	listener net.Listener
	page     *leasepage.Page
	paths    []string
}

// serve listens on c.MetricsAddr.
func serve(c Config, group *lifecycle.LoopGroup) (*server, error) {
	s := &server{page: leasepage.New(leasepage.Options{Title: "sqsloop worker: " + c.Queue.Name()})}
	health := group.HealthHandler()
	handlers := map[string]http.Handler{LeasesPath: s.page, lifecycle.LivezPath: health, lifecycle.ReadyzPath: health}
	mux := http.NewServeMux()
	for p, h := range handlers {
		mux.Handle(p, h)
	}
	s.paths = slices.Sorted(maps.Keys(handlers))
	ln, err := net.Listen("tcp", c.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	s.listener = ln
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return s, nil
}

// String says where it serves what: "http://127.0.0.1:9464 (/debug/sqsloop,
// /livez, /readyz)".
func (s *server) String() string {
	return fmt.Sprintf("http://%s (%s)", s.listener.Addr(), strings.Join(s.paths, ", "))
}
