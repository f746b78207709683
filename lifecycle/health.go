package lifecycle

import (
	"errors"
	"fmt"
	"net/http"
)

// Health probe paths served by [LoopGroup.HealthHandler].
const (
	// LivezPath answers 200 while Run is in progress (draining included),
	// so an orchestrator does not kill a process finishing its work.
	LivezPath = "/livez"
	// ReadyzPath answers 200 while the group is ready ([LoopGroup.Ready]
	// returns nil).
	ReadyzPath = "/readyz"
)

// live reports whether Run is in progress: true from the call to Run until
// it returns, draining included, so an orchestrator does not kill a process
// that is finishing its in-flight work.
func (g *LoopGroup) live() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}

// Ready reports whether the group should be sent work: nil while Run is in
// progress, shutdown has not begun (readiness turns false the moment it
// begins, a signal included, before any loop is asked to stop), every
// loop's Run is still running, no loop that can pause is paused (drain
// mode), and every loop with a Ready method (see [Runnable]) reports
// ready. Otherwise it returns an error saying why (naming the
// loop), which wraps the loop's own error. It is an error before Run and
// after it returns. Safe for concurrent use; it calls the loops' Ready
// outside the group's lock.
func (g *LoopGroup) Ready() error {
	g.mu.Lock()
	switch {
	case !g.running:
		g.mu.Unlock()
		return errors.New("lifecycle: group not running")
	case g.stopping != "":
		why := g.stopping
		g.mu.Unlock()
		return fmt.Errorf("lifecycle: shutting down: %s", why)
	}
	type reporter struct {
		name string
		r    readyReporter
		p    pauser
	}
	var reporters []reporter
	for _, l := range g.loops {
		if l.finished {
			g.mu.Unlock()
			return fmt.Errorf("lifecycle: loop %q returned", l.name)
		}
		rr, _ := l.r.(readyReporter)
		p, _ := l.r.(pauser)
		if rr != nil || p != nil {
			reporters = append(reporters, reporter{l.name, rr, p})
		}
	}
	g.mu.Unlock()
	for _, rr := range reporters {
		if rr.p != nil {
			if paused, _ := rr.p.Paused(); paused {
				return fmt.Errorf("lifecycle: loop %q paused (drain mode)", rr.name)
			}
		}
		if rr.r == nil {
			continue
		}
		if err := rr.r.Ready(); err != nil {
			return fmt.Errorf("lifecycle: loop %q not ready: %w", rr.name, err)
		}
	}
	return nil
}

// HealthHandler returns an [http.Handler] serving two probes for the group:
// GET or HEAD [LivezPath] ("/livez") answers 200 "ok" while Run is in
// progress, draining included, else 503 "unavailable: not running"; GET or
// HEAD [ReadyzPath] ("/readyz") answers 200 "ok" when [LoopGroup.Ready]
// returns nil, else 503 "unavailable: " and the reason. Other methods get
// 405, other paths 404. Paths are matched exactly; mount it under a prefix
// with [http.StripPrefix]. It may be called before Run, and the handler
// serves the probes before, during and after Run. Serve it from a loop
// added with LoopOption.Last ([HTTPServer]), so that the probes answer until every
// other loop has returned: a server stopped when shutdown begins answers
// neither probe during the drain. The handler is safe for
// concurrent use and never blocks on the loops (beyond their Ready methods).
func (g *LoopGroup) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var why error
		switch r.URL.Path {
		case LivezPath:
			if !g.live() {
				why = errors.New("not running")
			}
		case ReadyzPath:
			why = g.Ready()
		default:
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if why != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("unavailable: " + why.Error() + "\n"))
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok\n"))
	})
}
