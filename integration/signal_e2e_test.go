package integration

import (
	"errors"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/mailboxtest"
)

// killedBy reports whether err, a child's Wait's, says that the process was
// killed by sig.
func killedBy(err error, sig syscall.Signal) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// sorted returns a sorted copy of ids, for comparing sets.
func sorted(ids []string) []string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

// A deploy loses nothing, through a real process and its signal, on the
// SQS server and on both databases: a consumer process (the zero
// lifecycle.LoopGroup, 2 handlers, 20 s long polls, 30 s leases) gets
// SIGTERM while both handlers run. It starts no other handler, lets the two
// finish, acks them before it exits, and exits 0. A second receiver then
// gets exactly the messages that did not run, within 10 s, sooner than the
// 30 s lease, so none is left hidden by the process; the two that ran were
// deleted. (The process receives for its free slots only, so
// it holds no unstarted message here; TestE2EShutdownGivesBackUnstarted
// makes it hold some.)
func TestE2ESIGTERMDrainsConsumerProcess(t *testing.T) {
	t.Parallel()
	forEachProcessBackend(t, longLease, func(t *testing.T, q processQueue) {
		ctx := t.Context()
		ids := mailboxtest.SendBodies(ctx, t, q.mb, jobBodies(10)...)

		cfg := q.child
		cfg.Lease, cfg.Hold = longLease, 3*time.Second
		p := startChild(t, childEnv, cfg)
		running := p.awaitStarts(t, 2, patience)
		if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		started, done, exit, err := p.rest(t, 30*time.Second)
		t.Logf("%s: running at SIGTERM %v, started after %v, finished %v; %s", q.backend, running, started, done, exit)
		if err != nil {
			t.Errorf("%s: the consumer process exited with %v after SIGTERM, want 0; stderr:\n%s", q.backend, err, p.Stderr())
		}
		if len(started) != 0 {
			t.Errorf("%s: handlers started after SIGTERM: %v", q.backend, started)
		}
		if !slices.Equal(sorted(done), sorted(running)) {
			t.Errorf("%s: handlers finished after SIGTERM: %v, want the two running: %v", q.backend, done, running)
		}

		var want []string
		for _, id := range ids {
			if !slices.Contains(running, id) {
				want = append(want, id)
			}
		}
		back := mailboxtest.ReceiveN(ctx, t, q.mb, len(want), patience, longLease)
		got := make([]string, len(back))
		for i, m := range back {
			got[i] = m.ID
		}
		if !slices.Equal(sorted(got), sorted(want)) {
			t.Errorf("%s: a second receiver got %s, want the %d messages that did not run", q.backend, describe(back), len(want))
		}
		mailboxtest.AckAll(ctx, t, q.mb, back...)
		mailboxtest.ExpectNone(ctx, t, q.mb, time.Second) // the two that ran were deleted
	})
}

// A killed consumer process loses no message, on the SQS server and on
// both databases: a consumer process (2 handlers, 20 s long polls, 4 s
// leases extended by 4 s every second while the handlers beat) is killed
// with SIGKILL while both handlers run, after their first lease would have
// ended. No drain runs; the server (or the database's visible-at times)
// alone makes the messages visible again when the last extension ends. A
// second receiver gets every message back within 10 s, the two that were
// running with a receive count above 1: none was deleted before its
// handler returned, and no extension reached further than the 4 s asked.
func TestE2ESIGKILLedConsumerProcessLosesNothing(t *testing.T) {
	t.Parallel()
	const lease = 4 * time.Second
	forEachProcessBackend(t, lease, func(t *testing.T, q processQueue) {
		ctx := t.Context()
		ids := mailboxtest.SendBodies(ctx, t, q.mb, jobBodies(10)...)

		cfg := q.child
		cfg.Lease, cfg.Hold = lease, time.Minute
		p := startChild(t, childEnv, cfg)
		running := p.awaitStarts(t, 2, patience)
		// The scenario, not a race: the handlers run past their first lease, so
		// that what the kill leaves behind is held by extensions.
		select {
		case <-time.After(2 * lease):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
		if err := p.Cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_, done, _, err := p.rest(t, patience)
		t.Logf("%s: running at SIGKILL %v; the process ended with %v", q.backend, running, err)
		if !killedBy(err, syscall.SIGKILL) {
			t.Fatalf("%s: the process ended with %v, want killed by the test's SIGKILL; stderr:\n%s", q.backend, err, p.Stderr())
		}
		if len(done) != 0 {
			t.Fatalf("%s: handlers finished before the kill: %v (they beat for a minute)", q.backend, done)
		}

		back := mailboxtest.ReceiveN(ctx, t, q.mb, len(ids), patience, longLease)
		got := make([]string, len(back))
		for i, m := range back {
			got[i] = m.ID
			if slices.Contains(running, m.ID) && m.ReceiveCount < 2 {
				t.Errorf("%s: message %s was running at the kill but comes back with receive count %d, want ≥ 2", q.backend, m.ID, m.ReceiveCount)
			}
		}
		if !slices.Equal(sorted(got), sorted(ids)) {
			t.Errorf("%s: a second receiver got %s, want every one of the %d messages", q.backend, describe(back), len(ids))
		}
		mailboxtest.AckAll(ctx, t, q.mb, back...)
	})
}
