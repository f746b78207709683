package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// The classes of a loop (LoopStats.Class): when a [LoopGroup] asks it to
// stop, and with what budget. [LoopOption] sets it.
const (
	// ClassCritical (the default) is asked to stop when shutdown begins and
	// drains with the group's whole budget: a consumer of long jobs.
	ClassCritical = "critical"
	// ClassBackground is asked to stop when shutdown begins, like
	// ClassCritical, but with a shorter budget of its own
	// (LoopOption.Background): work that can be cut short (a consumer of
	// short or cheap jobs, a poller, a reaper). It is done first and leaves
	// the rest of the budget, and the machine, to the critical loops.
	ClassBackground = "background"
	// ClassLast is asked to stop only once every other loop has returned
	// (LoopOption.Last): it serves the others to the end (the health
	// probes, so that /livez answers 200 and /readyz 503 through the drain;
	// metrics; the lease page). See [HTTPServer].
	ClassLast = "last"
)

// LoopOption sets how a [LoopGroup] stops one loop; pass it to
// [LoopGroup.Add]. The zero LoopOption makes a [ClassCritical] loop: asked
// to stop when shutdown begins, with the group's whole budget.
type LoopOption struct {
	// Background, when > 0, makes a [ClassBackground] loop: when shutdown
	// begins it is asked to stop at once, with Background as the deadline
	// of its Shutdown context (never later than the group's own, with a
	// GracePeriod). Must be ≥ 0.
	Background time.Duration

	// Last makes a [ClassLast] loop: asked to stop only once every other
	// loop has returned, with what is left of the group's budget (at least
	// 1 s) as the deadline of its Shutdown context, or none without a
	// GracePeriod. Serve the health probes from such a loop ([HTTPServer]),
	// so that they answer through the drain. Not with Background.
	Last bool
}

// apply sets l's class and budget from o, or returns why o is wrong.
func (o LoopOption) apply(l *loop) error {
	switch {
	case o.Background < 0:
		return &invalidArgument{"LoopOption.Background", fmt.Sprintf("a budget > 0 for loop %q", l.name), o.Background.String()}
	case o.Background > 0 && o.Last:
		return &invalidArgument{"LoopOption", fmt.Sprintf("Background or Last for loop %q, not both", l.name), "both"}
	case o.Background > 0:
		l.class, l.budget = ClassBackground, o.Background
	case o.Last:
		l.class = ClassLast
	}
	return nil
}

// lastGrace is the least a ClassLast loop gets to stop (an HTTP server to
// answer its requests in progress) once the others have returned, when
// they used the whole budget: 1 s.
const lastGrace = time.Second

// shutdownBudget is what the loops of a group with GracePeriod p get: p
// less a margin for what follows their drains (a consumer's last calls
// after its budget, flushing telemetry, exiting): a tenth of p, at least
// 2 s, at most half of p. 30 s gives 27 s.
func shutdownBudget(p time.Duration) time.Duration {
	return p - min(max(p/10, 2*time.Second), p/2)
}

// begin records that shutdown began, now, for why, logs it, and returns
// the group's budget (0: none).
func (g *LoopGroup) begin(why string) time.Duration {
	g.mu.Lock()
	g.stopping, g.began = why, time.Now()
	if g.GracePeriod > 0 {
		g.budget = shutdownBudget(g.GracePeriod)
	}
	budget := g.budget
	g.mu.Unlock()
	attrs := []slog.Attr{slog.String("cause", why)}
	if budget > 0 {
		attrs = append(attrs, duration("budget", budget), duration("grace_period", g.GracePeriod))
	}
	g.logger().LogAttrs(context.Background(), slog.LevelInfo, "lifecycle: shutdown began", attrs...)
	return budget
}

// deadline is the Shutdown deadline of l, asked to stop at now; zero for
// none. Called with g.mu held.
func (g *LoopGroup) deadline(l *loop, now time.Time) time.Time {
	var end time.Time
	if g.budget > 0 {
		end = g.began.Add(g.budget)
	}
	switch l.class {
	case ClassBackground:
		if own := g.began.Add(l.budget); end.IsZero() || own.Before(end) {
			end = own
		}
	case ClassLast:
		if floor := now.Add(lastGrace); !end.IsZero() && end.Before(floor) {
			end = floor
		}
	}
	return end
}

// logger returns the group's Logger, or slog.Default().
func (g *LoopGroup) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}

// logStopped logs that l, asked to stop, has returned: when, against its
// budget, and its error (at WARN then, or when past its deadline).
func (g *LoopGroup) logStopped(l *loop) {
	g.mu.Lock()
	s := g.loopStats(l)
	g.mu.Unlock()
	level := slog.LevelInfo
	attrs := []slog.Attr{slog.String("loop", s.Name), slog.String("class", s.Class), duration("after", s.Returned)}
	if s.Budget > 0 {
		attrs = append(attrs, duration("budget", s.Budget))
		if s.Returned > s.Budget {
			level = slog.LevelWarn
		}
	}
	if s.Err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.Any("error", s.Err))
	}
	g.logger().LogAttrs(context.Background(), level, "lifecycle: loop stopped", attrs...)
}

// logSpent logs, when the group's budget is spent, the loops still
// running: the platform's SIGKILL comes soon.
func (g *LoopGroup) logSpent() {
	g.mu.Lock()
	var still []string
	for _, l := range g.loops {
		if !l.finished {
			still = append(still, l.name)
		}
	}
	budget := g.budget
	g.mu.Unlock()
	if len(still) > 0 {
		g.logger().Warn("lifecycle: shutdown budget spent; loops still running",
			duration("budget", budget), slog.String("loops", strings.Join(still, ", ")))
	}
}

// logTimeline logs, once every loop has returned, which loop finished
// when, since shutdown began.
func (g *LoopGroup) logTimeline() {
	st := g.Stats()
	if st.ShutdownBegan.IsZero() {
		return
	}
	var b strings.Builder
	for i, l := range st.Loops {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s", l.Name, l.Class)
		if l.Budget > 0 {
			fmt.Fprintf(&b, ", budget %v", l.Budget)
		}
		fmt.Fprintf(&b, ") %v", l.Returned)
	}
	g.logger().LogAttrs(context.Background(), slog.LevelInfo, "lifecycle: group stopped",
		slog.String("cause", st.Cause), duration("took", time.Since(st.ShutdownBegan).Round(time.Millisecond)),
		slog.String("loops", b.String()))
}

// GroupStats is the state of a group and of its loops: what its shutdown
// did, which loop failed, and its drain mode. See [LoopGroup.Stats].
type GroupStats struct {
	// ShutdownBegan is when shutdown began (zero before), and Cause why.
	ShutdownBegan time.Time
	Cause         string
	// Budget is the loops' budget from GracePeriod (0: none).
	Budget time.Duration
	// State is the group's drain mode: StateStopping once shutdown has
	// begun; else StateRunning while no loop is paused, StateDrained when
	// every loop that can pause is paused with nothing in flight, and
	// StateDraining otherwise.
	State string
	// Loops are the group's loops, in the order they were added.
	Loops []LoopStats
}

// LoopStats is one loop's state. Times are counted from when shutdown
// began.
type LoopStats struct {
	Name string
	// Class is ClassCritical, ClassBackground or ClassLast.
	Class string
	// Budget is the deadline of its Shutdown context (0: none, or not
	// asked yet).
	Budget time.Duration
	// Asked is when the group asked it to stop, Returned when its Run
	// returned (a loop that returned on its own, beginning shutdown: 0);
	// Done reports that it has.
	Asked, Returned time.Duration
	Done            bool
	// Err is what went wrong with the loop, as [LoopGroup.Run]'s error
	// reports it (nil for a clean stop): its Run error, once it has
	// returned, and its Shutdown error ("shutdown: …"), joined.
	Err error
	// State is the loop's drain mode, for a loop that can pause (see
	// Runnable): StateRunning, StateDraining (paused, with work in
	// flight) or StateDrained (paused, nothing in flight); "" for a loop
	// that cannot. InFlight is the work it still has in flight then.
	State    string
	InFlight int
}

// Stats returns the state of the group and of its loops: when shutdown
// began, and for each loop when it was asked to stop and when it
// returned, against its budget (Run logs the same timeline when it
// returns), its error, and the drain mode. Safe for concurrent use; it
// asks the loops that can pause whether they are, outside the group's
// lock.
func (g *LoopGroup) Stats() GroupStats {
	g.mu.Lock()
	st := GroupStats{ShutdownBegan: g.began, Cause: g.stopping, Budget: g.budget}
	ps := make([]pauser, len(g.loops))
	for i, l := range g.loops {
		st.Loops = append(st.Loops, g.loopStats(l))
		ps[i], _ = l.r.(pauser)
	}
	g.mu.Unlock()
	drainStates(&st, ps)
	return st
}

// loopStats returns l's stats, but for its drain state. Called with g.mu
// held.
func (g *LoopGroup) loopStats(l *loop) LoopStats {
	s := LoopStats{Name: l.name, Class: l.class, Done: l.finished, Err: l.err()}
	since := func(t time.Time) time.Duration {
		if t.IsZero() || g.began.IsZero() {
			return 0
		}
		return max(t.Sub(g.began), 0).Round(time.Millisecond)
	}
	if l.asked {
		s.Asked = since(l.askedAt)
		s.Budget = since(l.stopBy)
	}
	if l.finished {
		s.Returned = since(l.ended)
	}
	return s
}

// duration is a log attribute of d as text ("25s"): slog.Duration would
// log nanoseconds under slog.JSONHandler.
func duration(key string, d time.Duration) slog.Attr { return slog.String(key, d.String()) }
