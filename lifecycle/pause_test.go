package lifecycle

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
)

// pauseLoop can pause: paused, it reports inFlight.
type pauseLoop struct {
	*blockingLoop
	mu       sync.Mutex
	paused   bool
	inFlight int
	pauses   int
}

func (p *pauseLoop) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.paused = true
		p.pauses++
	}
}

func (p *pauseLoop) Resume() { p.mu.Lock(); p.paused = false; p.mu.Unlock() }

func (p *pauseLoop) Paused() (bool, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused, p.inFlight
}

func (p *pauseLoop) set(inFlight int) { p.mu.Lock(); p.inFlight = inFlight; p.mu.Unlock() }

// call makes a request of h from remote (host:port), with header h set.
func call(h http.Handler, method, path, remote string, header map[string]string) (int, drainView, string) {
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = remote
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var st drainView
	_ = json.Unmarshal(rec.Body.Bytes(), &st)
	return rec.Code, st, rec.Body.String()
}

// Drain mode over HTTP, as an operator uses it: POST /drain pauses the
// group's loops that can pause (202), /readyz turns 503 and /livez stays 200, GET /drain
// says "draining" while work is in flight and "drained" once none is; POST
// /resume takes work again, and it works again and again. Only loopback
// clients, no cross-origin browser request, no POST once shutdown began.
func TestDrainHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &pauseLoop{blockingLoop: newBlockingLoop()}
		g, f := newGroup(t, map[string]Runnable{"orders": a, "reaper": newBlockingLoop()})
		h, health := g.DrainHandler(), g.HealthHandler()
		res := runAsync(context.Background(), g)
		synctest.Wait()
		const local = "127.0.0.1:5000"

		if c, st, body := call(h, "GET", DrainPath, local, nil); c != 200 || st.State != StateRunning {
			t.Fatalf("GET /drain = %d %s, want 200 running", c, body)
		}
		for round := range 3 {
			a.set(2)
			c, st, body := call(h, "POST", DrainPath, local, nil)
			if c != 202 || st.State != StateDraining || len(st.Loops) != 1 || st.Loops[0] != (loopDrain{"orders", StateDraining, 2}) {
				t.Fatalf("round %d: POST /drain = %d %s, want 202 draining, orders with 2 in flight", round, c, body)
			}
			if code(health, ReadyzPath) != 503 || code(health, LivezPath) != 200 {
				t.Errorf("round %d: while paused /readyz %d, /livez %d; want 503, 200", round, code(health, ReadyzPath), code(health, LivezPath))
			}
			if _, body := probe(health, "GET", ReadyzPath); !strings.Contains(body, `loop "orders" paused (drain mode)`) {
				t.Errorf("round %d: /readyz says %q", round, body)
			}
			a.set(0)
			if c, st, body := call(h, "GET", DrainPath, "[::1]:5000", nil); c != 200 || st.State != StateDrained {
				t.Errorf("round %d: GET /drain = %d %s, want drained", round, c, body)
			}
			if c, st, body := call(h, "POST", ResumePath, local, nil); c != 200 || st.State != StateRunning {
				t.Errorf("round %d: POST /resume = %d %s, want 200 running", round, c, body)
			}
			if code(health, ReadyzPath) != 200 {
				t.Errorf("round %d: not ready after resume", round)
			}
		}
		if a.pauses != 3 {
			t.Errorf("%d pauses, want 3", a.pauses)
		}
		for _, tc := range []struct {
			method, path, remote string
			header               map[string]string
			want                 int
		}{
			{"POST", DrainPath, "10.0.0.7:5000", nil, 403},
			{"GET", DrainPath, "192.0.2.1:80", nil, 403},
			{"POST", DrainPath, local, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
			{"GET", ResumePath, local, nil, 405},
			{"PUT", DrainPath, local, nil, 405},
			{"GET", "/other", local, nil, 404},
		} {
			if c, _, body := call(h, tc.method, tc.path, tc.remote, tc.header); c != tc.want {
				t.Errorf("%s %s from %s %v = %d %q, want %d", tc.method, tc.path, tc.remote, tc.header, c, body, tc.want)
			}
		}
		if paused, _ := a.Paused(); paused {
			t.Error("a refused request paused the loop")
		}
		g.AllowRemoteDrain = true
		if c, _, _ := call(g.DrainHandler(), "GET", DrainPath, "10.0.0.7:5000", nil); c != 200 {
			t.Errorf("GET /drain from a remote client with AllowRemoteDrain = %d, want 200", c)
		}

		f.send(t, syscall.SIGTERM)
		synctest.Wait()
		if c, st, _ := call(h, "GET", DrainPath, local, nil); c != 200 || st.State != StateStopping {
			t.Errorf("GET /drain during shutdown = %d %q, want stopping", c, st.State)
		}
		if c, _, _ := call(h, "POST", ResumePath, local, nil); c != 409 {
			t.Errorf("POST /resume during shutdown = %d, want 409", c)
		}
		if err := <-res; err != nil {
			t.Fatal(err)
		}
	})
}
