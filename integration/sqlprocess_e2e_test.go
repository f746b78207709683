package integration

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// counts reads the queue's messages by state.
func counts(t *testing.T, mb sqsloop.Mailbox) sqsloop.QueueAttributes {
	t.Helper()
	a, err := mb.(sqsloop.AttributesReader).QueueAttributes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The crash test, on a database: a consumer process (8 handlers of 50 ms,
// 4 s leases) is killed with SIGKILL mid-batch, at a handler's start after
// 100 of 300 jobs are done, so that jobs are in flight (the queue says so
// right after the kill). A second process, started at once on the same
// database, says how many it found waiting and runs until the queue is
// empty. Every job is done at least once and none is lost (the queue ends
// empty): the jobs the first process had in flight, never acked, are run
// by the second once their leases lapse.
func TestE2ESQLSIGKILLMidBatchThenRestart(t *testing.T) {
	t.Parallel()
	const lease = 4 * time.Second
	forEachSQLQueue(t, lease, func(t *testing.T, q processQueue) {
		ctx := t.Context()
		ids := mailboxtest.SendBodies(ctx, t, q.mb, jobBodies(300)...)
		cfg := q.child
		cfg.Lease, cfg.Hold, cfg.Concurrency = lease, 50*time.Millisecond, 8

		first := startChild(t, childEnv, cfg)
		_, done := first.awaitDone(t, 100, time.Minute)
		_, more := first.await(t, 1, 0, patience) // a handler has started: its job is in flight
		killErr := first.Cmd.Process.Kill()
		_, last, _, err := first.rest(t, patience)
		if killErr != nil || !killedBy(err, syscall.SIGKILL) {
			t.Fatalf("%s: the first process ended with %v (kill: %v), want killed by the test's SIGKILL; stderr:\n%s", q.backend, err, killErr, first.Stderr())
		}
		atKill := counts(t, q.mb)
		if atKill.ApproximateMessagesInFlight == 0 {
			t.Errorf("%s: nothing in flight right after the kill (%+v), want the jobs the process was running", q.backend, atKill)
		}
		doneBefore := map[string]bool{}
		for _, id := range slices.Concat(done, more, last) {
			doneBefore[id] = true
		}

		cfg.ExitWhenEmpty = true
		second := startChild(t, childEnv, cfg)
		var waiting string
		for line := range second.Within(t, patience) {
			waiting, _ = strings.CutPrefix(line, "waiting ")
			break
		}
		_, doneAfter, _, err := second.rest(t, time.Minute)
		if err != nil {
			t.Fatalf("%s: the second process: %v; stderr:\n%s", q.backend, err, second.Stderr())
		}
		again, doneEver := 0, map[string]bool{}
		for _, id := range doneAfter {
			if doneBefore[id] {
				again++
			}
			doneEver[id] = true
		}
		var lost []string
		for _, id := range ids {
			if !doneBefore[id] && !doneEver[id] {
				lost = append(lost, id)
			}
		}
		t.Logf("%s: SIGKILL after %d of %d jobs done, %d in flight; the restart found %s waiting and did %d jobs, "+
			"%d of them done before the kill (their acks lost with the process); %d lost",
			q.backend, len(doneBefore), len(ids), atKill.ApproximateMessagesInFlight, waiting, len(doneAfter), again, len(lost))
		if len(lost) > 0 {
			t.Errorf("%s: %d jobs never done: %v", q.backend, len(lost), lost)
		}
		if a := counts(t, q.mb); a.ApproximateMessages+a.ApproximateMessagesInFlight+a.ApproximateMessagesDelayed != 0 {
			t.Errorf("%s: the queue holds %+v after the restart drained it", q.backend, a)
		}
	})
}
