package lifecycle

import (
	"encoding/json"
	"net/http"
	"net/netip"
)

// Pauser is optionally implemented by a [Runnable] that can stop taking new
// work and finish what it has in flight without exiting (drain mode), and
// take work again: for a blue/green switch, or an operator pausing a
// queue. A consumer does. [LoopGroup.Pause], [LoopGroup.Resume] and
// [LoopGroup.DrainHandler] use it, and a paused loop is not ready
// ([LoopGroup.Ready]): /readyz answers 503 while it is paused, /livez
// still 200. Its methods must be safe for concurrent use, also with Run,
// and must not block.
type Pauser interface {
	// Pause stops taking new work; what is in flight goes on to its end.
	// It does nothing to a paused loop.
	Pause()
	// Resume takes work again. It does nothing to a loop not paused.
	Resume()
	// Paused reports whether the loop is paused, and how much work it
	// still has in flight (a consumer: the messages it holds).
	Paused() (paused bool, inFlight int)
}

// Drain states, as [LoopGroup.DrainState] and [LoopGroup.DrainHandler]
// report them.
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

// DrainState is the drain mode of a group and of each of its loops that
// implements [Pauser], as [LoopGroup.DrainHandler] serves it in JSON.
type DrainState struct {
	// State is StateStopping once shutdown has begun; else StateRunning
	// while no loop is paused, StateDrained when every Pauser is paused
	// with nothing in flight, and StateDraining otherwise.
	State string           `json:"state"`
	Loops []LoopDrainState `json:"loops"`
}

// LoopDrainState is the drain mode of one loop.
type LoopDrainState struct {
	Name string `json:"name"`
	// State is StateRunning, StateDraining or StateDrained.
	State    string `json:"state"`
	InFlight int    `json:"in_flight"`
}

// pausers returns the group's loops that implement Pauser, by name.
func (g *LoopGroup) pausers() (names []string, ps []Pauser) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, l := range g.loops {
		if p, ok := l.r.(Pauser); ok {
			names, ps = append(names, l.name), append(ps, p)
		}
	}
	return names, ps
}

// Pause puts every loop that implements [Pauser] in drain mode: it stops
// taking new work, finishes what it has in flight, and stays up until
// Resume (or shutdown). The group is not ready meanwhile. It returns at
// once; [LoopGroup.DrainState] tells when the loops are drained. Safe for
// concurrent use, before, during and after Run.
func (g *LoopGroup) Pause() {
	_, ps := g.pausers()
	for _, p := range ps {
		p.Pause()
	}
}

// Resume makes every loop that implements [Pauser] take work again, as
// often as it was paused. Safe for concurrent use.
func (g *LoopGroup) Resume() {
	_, ps := g.pausers()
	for _, p := range ps {
		p.Resume()
	}
}

// DrainState reports the drain mode of the group and of each loop that
// implements [Pauser]. Safe for concurrent use; it calls the loops' Paused
// outside the group's lock.
func (g *LoopGroup) DrainState() DrainState {
	g.mu.Lock()
	stopping := g.stopping != ""
	g.mu.Unlock()
	names, ps := g.pausers()
	st := DrainState{State: StateRunning, Loops: []LoopDrainState{}}
	paused, drained := 0, 0
	for i, p := range ps {
		isPaused, inFlight := p.Paused()
		ls := LoopDrainState{Name: names[i], State: StateRunning, InFlight: inFlight}
		if isPaused {
			paused++
			ls.State = StateDraining
			if inFlight == 0 {
				drained++
				ls.State = StateDrained
			}
		}
		st.Loops = append(st.Loops, ls)
	}
	switch {
	case stopping:
		st.State = StateStopping
	case drained > 0 && drained == len(ps):
		st.State = StateDrained
	case paused > 0:
		st.State = StateDraining
	}
	return st
}

// Paths served by [LoopGroup.DrainHandler].
const (
	// DrainPath: POST pauses the group's Pausers (202 Accepted); GET or
	// HEAD reports the drain state.
	DrainPath = "/drain"
	// ResumePath: POST resumes them (200).
	ResumePath = "/resume"
)

// DrainHandlerOptions configures [LoopGroup.DrainHandler].
type DrainHandlerOptions struct {
	// AllowRemote lets any client call the handler. False (the default):
	// only clients on a loopback address (127.0.0.0/8, ::1) or a Unix
	// socket; others get 403. Behind a proxy on the same host every
	// client looks local: guard the route there.
	AllowRemote bool
}

// DrainHandler returns an [http.Handler] for an operator to put the
// group in drain mode and back, for a blue/green switch or to pause a
// queue: POST [DrainPath] ("/drain") pauses every loop that implements
// [Pauser] ([LoopGroup.Pause]) and answers 202 with the drain state;
// POST [ResumePath] ("/resume") resumes them and answers 200 with it; GET
// or HEAD /drain answers 200 with it: JSON as [DrainState], e.g.
// {"state":"draining","loops":[{"name":"orders","state":"draining","in_flight":3}]};
// poll it until "drained". While paused, /readyz of
// [LoopGroup.HealthHandler] answers 503 (an orchestrator stops routing to
// the process, and does not restart it: /livez stays 200). Once shutdown
// has begun, POST answers 409. Other methods get 405, other paths 404.
// Paths are matched exactly; mount it under a prefix with
// [http.StripPrefix].
//
// It is off unless mounted: mount it on a listener the operator reaches
// (kubectl port-forward, ECS Exec). It answers only loopback clients
// unless opts.AllowRemote, and refuses cross-origin browser requests
// ([http.CrossOriginProtection]), so that a web page cannot drain the
// process. Safe for concurrent use.
func (g *LoopGroup) DrainHandler(opts DrainHandlerOptions) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !opts.AllowRemote && !loopback(r.RemoteAddr) {
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
			if g.DrainState().State == StateStopping {
				http.Error(w, "conflict: the group is shutting down", http.StatusConflict)
				return
			}
			if r.URL.Path == DrainPath {
				g.Pause()
				status = http.StatusAccepted
			} else {
				g.Resume()
			}
		case r.URL.Path == DrainPath && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		default:
			w.Header().Set("Allow", allow)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, _ := json.Marshal(g.DrainState()) // plain fields: cannot fail
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
