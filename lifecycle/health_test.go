package lifecycle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// probe returns the status code and body of method path on h.
func probe(h http.Handler, method, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code, rec.Body.String()
}

func code(h http.Handler, path string) int {
	c, _ := probe(h, "GET", path)
	return c
}

func TestReadinessFlipsAtShutdownStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrainLoop(10 * time.Second)
		g, f := newGroup(t, map[string]Runnable{"d": d, "b": newBlockingLoop()})
		var readyAtShutdown error
		d.onShutdown = func() { readyAtShutdown = g.Ready() }
		h := g.HealthHandler()

		if code(h, LivezPath) != 503 || code(h, ReadyzPath) != 503 {
			t.Error("probes answer 200 before Run")
		}
		res := runAsync(context.Background(), g)
		synctest.Wait()
		if code(h, LivezPath) != 200 || code(h, ReadyzPath) != 200 {
			t.Fatal("probes not 200 while running")
		}

		f.send(t, syscall.SIGTERM)
		synctest.Wait() // the group is now draining d for 10 s
		if readyAtShutdown == nil {
			t.Error("ready when the loop was asked to stop: readiness must turn false first")
		}
		if isClosed(d.returned) {
			t.Fatal("drain finished at once; the test needs it in progress")
		}
		c, body := probe(h, "GET", ReadyzPath)
		if want := "unavailable: lifecycle: shutting down: received signal terminated\n"; c != 503 || body != want {
			t.Errorf("GET /readyz while draining = %d %q, want 503 %q", c, body, want)
		}
		if code(h, LivezPath) != 200 {
			t.Error("not live while draining")
		}
		if err := <-res; err != nil {
			t.Errorf("Run = %v", err)
		}
		if code(h, LivezPath) != 503 || code(h, ReadyzPath) != 503 {
			t.Error("probes answer 200 after Run returned")
		}
	})
}

func TestReadinessFalseWhenGroupShutsDownItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrainLoop(10 * time.Second)
		g, _ := newGroup(t, map[string]Runnable{"d": d})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		synctest.Wait()
		if g.Ready() != nil {
			t.Fatal("not ready while running")
		}
		cancel()
		synctest.Wait()
		if g.Ready() == nil {
			t.Error("ready while draining after ctx was cancelled")
		}
		if !g.live() {
			t.Error("not live while draining")
		}
		<-res
	})
}

func TestReadinessAsksReadyReporter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrainLoop(0)
		g, _ := newGroup(t, map[string]Runnable{"d": d})
		ctx, cancel := context.WithCancel(context.Background())
		res := runAsync(ctx, g)
		synctest.Wait()
		if g.Ready() != nil {
			t.Fatal("not ready while the loop reports ready")
		}
		d.running.Store(false)
		if err := g.Ready(); err == nil || !strings.Contains(err.Error(), `loop "d" not ready`) {
			t.Error("ready while the loop reports not ready")
		}
		cancel()
		<-res
	})
}

func TestHealthHandlerRouting(t *testing.T) {
	var g LoopGroup
	h := g.HealthHandler()
	if got, _ := probe(h, "GET", "/other"); got != http.StatusNotFound {
		t.Errorf("GET /other = %d, want 404", got)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", ReadyzPath, nil))
	if rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Header().Get("Allow"), "GET") {
		t.Errorf("POST /readyz = %d Allow=%q, want 405 with Allow", rec.Code, rec.Header().Get("Allow"))
	}
	if got, _ := probe(h, "HEAD", LivezPath); got != http.StatusServiceUnavailable {
		t.Errorf("HEAD /livez before Run = %d, want 503", got)
	}
}
