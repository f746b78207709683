package lifecycle

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// The probes answer through the drain, on the wire: the group's health
// handler served by HTTPServer as a Last loop. While a loop drains after
// SIGTERM, GET /livez answers 200 and /readyz 503; once the drain is over,
// the server stops and Run returns nil.
func TestHTTPServerServesProbesThroughTheDrain(t *testing.T) {
	drain := make(chan struct{})
	g := &LoopGroup{Logger: slog.New(slog.DiscardHandler)}
	f := withFakeSignals(g)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: g.HealthHandler(), ReadHeaderTimeout: 5 * time.Second}
	if err := g.Add("consumer", drainUntil{drain}); err != nil {
		t.Fatal(err)
	}
	if err := g.Add("http", HTTPServer(srv, ln), LoopOption{Last: true}); err != nil {
		t.Fatal(err)
	}
	res := runAsync(context.Background(), g)
	url := "http://" + ln.Addr().String()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, _ := get(ReadyzPath); c == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz never answered 200")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.send(t, syscall.SIGTERM)
	for g.Stats().State != StateStopping {
		time.Sleep(time.Millisecond)
	}
	if c, body := get(LivezPath); c != 200 {
		t.Errorf("GET /livez during the drain = %d %q, want 200", c, body)
	}
	if c, body := get(ReadyzPath); c != 503 {
		t.Errorf("GET /readyz during the drain = %d %q, want 503", c, body)
	}
	close(drain)
	if err := <-res; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if c, body := get(LivezPath); c != 0 {
		t.Errorf("GET /livez after Run returned = %d %q, want no answer (server stopped)", c, body)
	}
}

// drainUntil drains until its channel is closed.
type drainUntil struct{ until chan struct{} }

func (d drainUntil) Run(context.Context) error { <-d.until; return nil }

func (d drainUntil) Shutdown(context.Context) error { <-d.until; return nil }
