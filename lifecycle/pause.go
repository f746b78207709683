package lifecycle

import (
	"encoding/json"
	"net/http"
	"net/netip"
)

// Drain states, as [LoopGroup.Stats] (GroupStats.State, LoopStats.State)
// and [LoopGroup.DrainHandler] report them.
const (
	// StateRunning: taking work (no loop paused).
	StateRunning = "running"
	// StateDraining: paused, with work still in flight.
	StateDraining = "draining"
	// StateDrained: paused, nothing in flight: safe to switch over.
	StateDrained = "drained"
	// StateStopping: the group's shutdown has begun (the group only).
	StateStopping = "stopping"
)

// pausers returns the group's loops that can pause (see Runnable).
func (g *LoopGroup) pausers() []pauser {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ps []pauser
	for _, l := range g.loops {
		if p, ok := l.r.(pauser); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// pause puts every loop that can pause in drain mode: it stops taking new
// work, finishes what it has in flight, and stays up until resume (or
// shutdown). The group is not ready meanwhile.
func (g *LoopGroup) pause() {
	for _, p := range g.pausers() {
		p.Pause()
	}
}

// resume makes every loop that can pause take work again.
func (g *LoopGroup) resume() {
	for _, p := range g.pausers() {
		p.Resume()
	}
}

// drainStates fills in the drain mode of st and of its loops, ps being
// the loops' pausers (nil for a loop that cannot pause), asking each
// whether it is paused. Called without the group's lock.
func drainStates(st *GroupStats, ps []pauser) {
	st.State = StateRunning
	can, paused, drained := 0, 0, 0
	for i, p := range ps {
		if p == nil {
			continue
		}
		can++
		ls := &st.Loops[i]
		isPaused, inFlight := p.Paused()
		ls.State, ls.InFlight = StateRunning, inFlight
		if isPaused {
			paused++
			ls.State = StateDraining
			if inFlight == 0 {
				drained++
				ls.State = StateDrained
			}
		}
	}
	switch {
	case st.Cause != "":
		st.State = StateStopping
	case drained > 0 && drained == can:
		st.State = StateDrained
	case paused > 0:
		st.State = StateDraining
	}
}

// drainView is the JSON DrainHandler serves: the drain mode of the group
// and of each loop that can pause.
type drainView struct {
	State string      `json:"state"`
	Loops []loopDrain `json:"loops"`
}

type loopDrain struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	InFlight int    `json:"in_flight"`
}

// drainState returns the group's drain mode as DrainHandler serves it.
func (g *LoopGroup) drainState() drainView {
	st := g.Stats()
	v := drainView{State: st.State, Loops: []loopDrain{}}
	for _, l := range st.Loops {
		if l.State != "" {
			v.Loops = append(v.Loops, loopDrain{Name: l.Name, State: l.State, InFlight: l.InFlight})
		}
	}
	return v
}

// Paths served by [LoopGroup.DrainHandler].
const (
	// DrainPath: POST pauses the group's loops that can pause (202
	// Accepted); GET or HEAD reports the drain state.
	DrainPath = "/drain"
	// ResumePath: POST resumes them (200).
	ResumePath = "/resume"
)

// DrainHandler returns an [http.Handler] for an operator to put the group
// in drain mode and back, for a blue/green switch or to pause a queue:
// POST [DrainPath] ("/drain") pauses every loop that can pause (see
// [Runnable]: a consumer can): they stop taking new work, finish what they
// have in flight and stay up until resumed (or shutdown); it answers 202
// with the drain state. POST [ResumePath] ("/resume") resumes them, as
// often as they were paused, and answers 200 with it; GET or HEAD /drain
// answers 200 with it: JSON such as
// {"state":"draining","loops":[{"name":"orders","state":"draining","in_flight":3}]},
// the State and InFlight of [LoopGroup.Stats]; poll it until "drained".
// While paused, /readyz of [LoopGroup.HealthHandler] answers 503 (an
// orchestrator stops routing to the process, and does not restart it:
// /livez stays 200). Once shutdown has begun, POST answers 409. Other
// methods get 405, other paths 404. Paths are matched exactly; mount it
// under a prefix with [http.StripPrefix].
//
// It is off unless mounted: mount it on a listener the operator reaches
// (kubectl port-forward, ECS Exec). It answers only loopback clients
// unless AllowRemoteDrain is set, and refuses cross-origin browser
// requests ([http.CrossOriginProtection]), so that a web page cannot drain
// the process. Safe for concurrent use.
func (g *LoopGroup) DrainHandler() http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.AllowRemoteDrain && !loopback(r.RemoteAddr) {
			http.Error(w, "forbidden: the drain endpoint answers loopback clients only", http.StatusForbidden)
			return
		}
		var allow string
		switch r.URL.Path {
		case DrainPath:
			allow = "GET, HEAD, POST"
		case ResumePath:
			allow = "POST"
		default:
			http.NotFound(w, r)
			return
		}
		status := http.StatusOK
		switch {
		case r.Method == http.MethodPost:
			if g.drainState().State == StateStopping {
				http.Error(w, "conflict: the group is shutting down", http.StatusConflict)
				return
			}
			if r.URL.Path == DrainPath {
				g.pause()
				status = http.StatusAccepted
			} else {
				g.resume()
			}
		case r.URL.Path == DrainPath && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		default:
			w.Header().Set("Allow", allow)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, _ := json.Marshal(g.drainState()) // plain fields: cannot fail
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_, _ = w.Write(append(body, '\n'))
	})
	return http.NewCrossOriginProtection().Handler(h)
}

// loopback reports whether a request's RemoteAddr is a loopback address,
// or a Unix socket's (empty, or "@").
func loopback(remote string) bool {
	if remote == "" || remote == "@" {
		return true
	}
	ap, err := netip.ParseAddrPort(remote)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}
