package integration

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// A second signal gives the in-flight messages back before the process
// exits: a consumer process (2 handlers that beat for a minute, 30 s
// leases, 20 s long polls, the zero lifecycle.LoopGroup) gets SIGTERM and
// then SIGINT while both handlers run. It exits at once with the second
// signal's status, after one WARN line saying how many messages were in
// flight and that they were given back; a second receiver then gets the
// two running messages back (receive count 2) well before their 30 s
// leases would have ended, and every other message too. Without the
// give-back the two would stay hidden for 30 s, and this receive, bounded
// by 10 s, would miss them.
func TestE2ESecondSignalGivesInFlightBack(t *testing.T) {
	t.Parallel()
	h := sqsServerHarness(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: longLease})
	defer cleanup()
	ids := mailboxtest.SendBodies(ctx, t, q.Mailbox, jobBodies(6)...)

	p := startChild(t, childEnv, childOn(t, q, longLease, time.Minute))
	running := p.awaitStarts(t, 2, patience)
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	_, done, _, err := p.rest(t, patience)
	exited := time.Since(signalled)
	t.Logf("%s: running %v; exited %v after the second signal with %v", h.Name(), running, exited.Round(time.Millisecond), err)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || (exit.ExitCode() != 130 && exit.ExitCode() != 143) {
		t.Errorf("%s: the process ended with %v, want exit status 130 or 143 (the second signal's)", h.Name(), err)
	}
	if len(done) != 0 {
		t.Errorf("%s: handlers finished before the exit: %v", h.Name(), done)
	}
	lines := strings.Count(p.Stderr(), "consumer: interrupted;")
	if lines != 1 || !strings.Contains(p.Stderr(), "2 messages in flight: 2 given back (visible again now)") {
		t.Errorf("%s: %d interrupted lines, want one saying 2 in flight, 2 given back; stderr:\n%s", h.Name(), lines, p.Stderr())
	}
	// The process waits for the give-back round at most InterruptTimeout;
	// the exit itself then takes a moment.
	t.Logf("%s: lifecycle.InterruptTimeout %v", h.Name(), lifecycle.InterruptTimeout)

	back := mailboxtest.ReceiveN(ctx, t, q.Mailbox, len(ids), patience, longLease)
	var got []string
	for _, m := range back {
		got = append(got, m.ID)
		if slices.Contains(running, m.ID) && m.ReceiveCount != 2 {
			t.Errorf("%s: running message %s came back with receive count %d, want 2", h.Name(), m.ID, m.ReceiveCount)
		}
	}
	if !slices.Equal(sorted(got), sorted(ids)) {
		t.Errorf("%s: a second receiver got %s within %v, want all %d messages (the two running ones given back, not hidden for %v)",
			h.Name(), describe(back), patience, len(ids), longLease)
	}
	mailboxtest.AckAll(ctx, t, q.Mailbox, back...)
}
