package lifecycle

import (
	"context"
	"time"
)

// Runnable is a long-lived loop. Run blocks until the loop has stopped and
// returns nil when it stopped cleanly. Cancelling ctx asks the loop to drain
// and stop; a loop stopped that way may return nil or [context.Canceled]
// (the group does not count either as a failure). Any other error, or a
// return before the group asked the loop to stop, ends the whole
// [LoopGroup]. A Runnable is run once, from one goroutine.
//
// A loop may have more methods, which the group finds by their
// signatures (a consumer has them all; the group imports none of its
// packages):
//
//   - Shutdown(ctx context.Context) error: the loop drains on request, in
//     the style of [net/http.Server.Shutdown]: it stops intake, waits for
//     in-flight work until ctx is done, and returns ctx's error if it was
//     done first. The group calls Shutdown to begin the drain, with a
//     context whose deadline is the loop's share of the group's budget
//     ([LoopGroup.GracePeriod], [LoopOption]; none without either) and
//     that is never cancelled before it, and leaves the loop's Run
//     context alone until Run has returned (unless Shutdown returns an
//     error or panics: then it cancels the Run context). The loop drains
//     within that deadline, or owns its budget when there is none (a
//     consumer: its ShutdownTimeout), and must return on its own. The
//     group waits for both Run and Shutdown to return. Shutdown is called
//     at most once, from a goroutine other than Run's, while Run may still
//     be running or may have just returned.
//   - Ready() error: the loop knows better than the group whether it is
//     doing its work (a consumer that has begun draining, or whose
//     receives have kept failing): nil when it is, else an error saying
//     why. [LoopGroup.Ready] asks it in addition to its own bookkeeping.
//     It must be safe for concurrent use and must not block.
//   - Interrupt(ctx context.Context): the loop has a last thing to do when
//     its process exits before the drain ends. On the second signal the
//     group calls Interrupt on every loop still running that has it, all
//     at once, with a context that ends after [InterruptTimeout], waits
//     for them until then (not longer, whatever they do), and then calls
//     Exit. A consumer gives back the leases of its in-flight messages, so
//     they do not stay hidden until their leases end. Interrupt must
//     return when ctx is done, be safe to call while Run and Shutdown run,
//     and never block on anything but ctx-bounded calls.
//   - Pause(), Resume() and Paused() (paused bool, inFlight int): the loop
//     can stop taking new work and finish what it has in flight without
//     exiting (drain mode), and take work again: for a blue/green switch,
//     or an operator pausing a queue. Pause does nothing to a paused loop,
//     Resume nothing to one not paused; Paused reports whether it is
//     paused and how much work it still has in flight (a consumer: the
//     messages it holds). [LoopGroup.DrainHandler] uses them, and a paused
//     loop is not ready ([LoopGroup.Ready]): /readyz answers 503 while it
//     is paused, /livez still 200. They must be safe for concurrent use,
//     also with Run, and must not block.
type Runnable interface {
	Run(ctx context.Context) error
}

// The optional methods of a Runnable (see Runnable).
type (
	shutdowner interface {
		Shutdown(ctx context.Context) error
	}
	readyReporter interface{ Ready() error }
	interrupter   interface{ Interrupt(ctx context.Context) }
	pauser        interface {
		Pause()
		Resume()
		Paused() (paused bool, inFlight int)
	}
)

// InterruptTimeout bounds how long [LoopGroup] waits for its loops'
// Interrupt calls on the second signal before the process exits: 1 s, so
// that a second Ctrl+C still exits at once to a person, and well inside
// the grace an orchestrator gives between SIGTERM and SIGKILL.
const InterruptTimeout = time.Second

// RunnableFunc adapts a function to [Runnable]. It has none of a
// Runnable's optional methods: the group stops it by cancelling ctx.
type RunnableFunc func(ctx context.Context) error

// Run calls f(ctx).
func (f RunnableFunc) Run(ctx context.Context) error { return f(ctx) }
