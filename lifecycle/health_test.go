package lifecycle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// probe returns the status code of method path on h.
func probe(h http.Handler, method, path string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code
}

func TestReadinessFlipsAtShutdownStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCoordinator(t, CoordinatorConfig{})
		defer c.Stop()
		d := newDrainLoop(10 * time.Second)
		g := newGroup(t, GroupConfig{Coordinator: c}, map[string]Runnable{"d": d, "b": newBlockingLoop()})
		h := g.HealthHandler()

		if probe(h, "GET", LivezPath) != 503 || probe(h, "GET", ReadyzPath) != 503 {
			t.Error("probes answer 200 before Run")
		}
		res := runAsync(context.Background(), g)
		synctest.Wait()
		if probe(h, "GET", LivezPath) != 200 || probe(h, "GET", ReadyzPath) != 200 {
			t.Fatal("probes not 200 while running")
		}

		c.Trigger()
		// No synctest.Wait: readiness must be false the moment shutdown
		// begins, before the group's goroutine has reacted.
		if g.Ready() == nil || probe(h, "GET", ReadyzPath) != 503 {
			t.Error("ready right after Trigger")
		}
		synctest.Wait() // the group is now draining d for 10 s
		if isClosed(d.returned) {
			t.Fatal("drain finished at once; the test needs it in progress")
		}
		if probe(h, "GET", ReadyzPath) != 503 {
			t.Error("ready while draining")
		}
		if probe(h, "GET", LivezPath) != 200 {
			t.Error("not live while draining")
		}
		if err := <-res; err != nil {
			t.Errorf("Run = %v", err)
		}
		if probe(h, "GET", LivezPath) != 503 || probe(h, "GET", ReadyzPath) != 503 {
			t.Error("probes answer 200 after Run returned")
		}
	})
}

func TestReadinessFalseWhenGroupShutsDownItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrainLoop(10 * time.Second)
		g := newGroup(t, GroupConfig{}, map[string]Runnable{"d": d})
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
		if !g.Live() {
			t.Error("not live while draining")
		}
		<-res
	})
}

func TestReadinessAsksReadyReporter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDrainLoop(0)
		g := newGroup(t, GroupConfig{}, map[string]Runnable{"d": d})
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
	if got := probe(h, "GET", "/other"); got != http.StatusNotFound {
		t.Errorf("GET /other = %d, want 404", got)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", ReadyzPath, nil))
	if rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Header().Get("Allow"), "GET") {
		t.Errorf("POST /readyz = %d Allow=%q, want 405 with Allow", rec.Code, rec.Header().Get("Allow"))
	}
	if got := probe(h, "HEAD", LivezPath); got != http.StatusServiceUnavailable {
		t.Errorf("HEAD /livez before Run = %d, want 503", got)
	}
}
