package integration

import (
	"strconv"
	"strings"
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

// The crash test: a consumer process (8 handlers of 50 ms, 2 s leases
// extended while they beat) is killed with SIGKILL mid-batch, after 100 of
// 300 jobs are done; a second process, started at once on the same
// database, says how many it found waiting and runs until the queue is
// empty. Every job is done at least once, none is lost (the queue ends
// empty), and the jobs the first process was running when killed are run
// again, once their leases lapse (they were never acked).
func TestE2ESQLSIGKILLMidBatchThenRestart(t *testing.T) {
	t.Parallel()
	forEachSQLQueue(t, 0, func(t *testing.T, q processQueue) {
		ctx := t.Context()
		mb := q.mb
		ids := mailboxtest.SendBodies(ctx, t, mb, jobBodies(300)...)
		cfg := q.child
		cfg.Lease, cfg.Hold, cfg.Concurrency = 2*time.Second, 50*time.Millisecond, 8

		first := startChild(t, childEnv, cfg)
		started, done := map[string]bool{}, map[string]int{}
		for line := range first.Lines {
			if id, ok := strings.CutPrefix(line, "start "); ok {
				started[id] = true
			}
			if id, ok := strings.CutPrefix(line, "done "); ok {
				done[id]++
				if len(done) == 100 {
					if err := first.Cmd.Process.Kill(); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if err := <-first.Exited; err == nil || len(done) >= len(ids) {
			t.Fatalf("the first process exited with %v after %d jobs, want killed mid-run; stderr:\n%s", err, len(done), first.Stderr())
		}
		var running []string // started, not done, at the kill
		for id := range started {
			if done[id] == 0 {
				running = append(running, id)
			}
		}
		doneBefore := len(done)

		cfg.ExitWhenEmpty = true
		second := startChild(t, childEnv, cfg)
		waiting := -1
		again := map[string]bool{}
		for line := range second.Lines {
			if n, ok := strings.CutPrefix(line, "waiting "); ok {
				waiting, _ = strconv.Atoi(n)
			}
			if id, ok := strings.CutPrefix(line, "done "); ok {
				if done[id] > 0 {
					again[id] = true
				}
				done[id]++
			}
		}
		if err := <-second.Exited; err != nil {
			t.Fatalf("the second process: %v; stderr:\n%s", err, second.Stderr())
		}
		var lost []string
		for _, id := range ids {
			if done[id] == 0 {
				lost = append(lost, id)
			}
		}
		for _, id := range running {
			if done[id] == 0 {
				t.Errorf("job %s, running at the kill, never finished", id)
			}
		}
		t.Logf("%s: SIGKILL after %d of %d jobs done, %d running; the restart found %d waiting and finished them; "+
			"%d jobs done twice (done before the kill, their acks lost with the process), %d lost",
			q.backend, doneBefore, len(ids), len(running), waiting, len(again), len(lost))
		if len(lost) > 0 {
			t.Errorf("%d jobs never done: %v", len(lost), lost)
		}
		if waiting < len(ids)-doneBefore || waiting > len(ids) {
			t.Errorf("the restart found %d waiting, want between %d (not done) and %d", waiting, len(ids)-doneBefore, len(ids))
		}
		if a := counts(t, mb); a.ApproximateMessages+a.ApproximateMessagesInFlight+a.ApproximateMessagesDelayed != 0 {
			t.Errorf("the queue holds %+v after the restart drained it", a)
		}
	})
}
