package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/internal/harness/jobstores"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// stateOf returns where the job children of q keep their jobstate: the
// SQLite file or the PostgreSQL database of q's mailbox (tables of their
// own beside it), and for a queue on the SQS server a new table on the
// DynamoDB-compatible server (a SQLite file of the test's own without one,
// except under CI=true).
func stateOf(t *testing.T, q processQueue) (dialect, target string) {
	t.Helper()
	switch q.child.Dialect {
	case "postgres":
		if err := migrateState(t.Context(), q.child.Target); err != nil {
			t.Fatal(err)
		}
		return "postgres", q.child.Target
	case "sqlite":
		return "sqlite", q.child.Target
	}
	// On SQS, the store users on AWS pick: DynamoDB (dynalite), so that
	// its conditional writes decide between the processes; a SQLite file
	// when no DynamoDB-compatible server is at hand (not under CI=true).
	if os.Getenv("DYNAMODB_ENDPOINT") != "" || os.Getenv("CI") == "true" {
		// A table deleted, and the client's connections closed (goleak),
		// when t ends.
		_, table := jobstores.DynamoDB(t)
		return "dynamodb", table
	}
	t.Logf("%s: DYNAMODB_ENDPOINT is unset: the jobstate is a SQLite file", q.backend)
	return "sqlite", filepath.Join(t.TempDir(), "jobstate.db")
}

// A job of 20 steps that checkpoints after each, its consumer process
// SIGKILLed mid-run 3 times (each time after 2 more steps began), on the
// SQS server and on both databases: each delivery resumes from the last
// checkpoint, so at most one step per kill runs again (3 in all), and the
// result, a hash chained through every step, is the one an uninterrupted
// run computes. Without checkpoints each kill would start again from
// step 0.
func TestE2ECheckpointedJobResumesAfterSIGKILL(t *testing.T) {
	t.Parallel()
	const (
		lease = 2 * time.Second
		steps = 20
		kills = 3
	)
	forEachProcessBackend(t, lease, func(t *testing.T, q processQueue) {
		ctx := t.Context()
		ids := mailboxtest.SendBodies(ctx, t, q.mb, "render")
		dialect, target := stateOf(t, q)
		cfg := jobChildConfig{Queue: q.child, StateDialect: dialect, StateTarget: target, Steps: steps, StepTime: 100 * time.Millisecond}
		cfg.Queue.Lease = lease
		var ran []int // every step begun, in order, over every process
		var result string
		for run := 0; run <= kills && result == ""; run++ {
			p := startChild(t, jobChildEnv, cfg)
			begun := 0
			for line := range p.Within(t, time.Minute) {
				f := strings.Fields(line)
				switch {
				case len(f) == 3 && f[0] == "step" && f[1] == ids[0]:
					n, _ := strconv.Atoi(f[2])
					ran = append(ran, n)
					begun++
				case len(f) == 3 && f[0] == "result" && f[1] == ids[0]:
					result = f[2]
				}
				if (run < kills && begun == 2) || result != "" {
					break
				}
			}
			if err := p.Cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Rest(t, patience); run < kills && !killedBy(err, syscall.SIGKILL) {
				t.Fatalf("run %d ended with %v before the kill; stderr:\n%s", run+1, err, p.Stderr())
			}
		}
		want := ""
		for n := range steps {
			want = stepHash(want, "render", n)
		}
		redone := len(ran) - steps
		t.Logf("%s: steps begun over %d kills: %v (%d redone)", q.backend, kills, ran, redone)
		if result != want {
			t.Errorf("%s: the job's result %q, want %q (every step once, in order)", q.backend, result, want)
		}
		if redone > kills || redone < 0 {
			t.Errorf("%s: %d steps run again over %d kills, want at most one per kill", q.backend, redone, kills)
		}
		for i := 1; i < len(ran); i++ {
			if ran[i] != ran[i-1]+1 && ran[i] != ran[i-1] {
				t.Errorf("%s: step %d followed step %d: a resume went back further than the step under way", q.backend, ran[i], ran[i-1])
			}
		}
	})
}

// A job of 5 steps that checkpoints after each, its consumer process
// SIGKILLed after the job ended and before its ack (the middleware's
// caller blocks until the kill), on the SQS server (its jobstate on
// DynamoDB) and on both databases: the next process, its mailbox failing
// 30 % of its calls (answers lost among them: faultyMailbox), acks the
// redelivery from the checkpoint's mark of the job done without running
// a step, and the queue empties. The job ran its 5 steps once. (Before
// the mark, the checkpoint was deleted when the handler returned, and the
// redelivery ran the 5 steps again from step 0.)
func TestE2ECheckpointedJobKilledBeforeItsAck(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	forEachProcessBackend(t, lease, func(t *testing.T, q processQueue) {
		ids := mailboxtest.SendBodies(t.Context(), t, q.mb, "render")
		dialect, target := stateOf(t, q)
		cfg := jobChildConfig{Queue: q.child, StateDialect: dialect, StateTarget: target, Steps: 5, StepTime: 100 * time.Millisecond,
			Freeze: []string{"render"}}
		cfg.Queue.Lease = lease
		var steps []string // every step begun, over both processes
		// read reads p's lines until one of until, and returns it.
		read := func(p child, until ...string) string {
			for line := range p.Within(t, time.Minute) {
				if f := strings.Fields(line); len(f) == 3 && f[0] == "step" && f[1] == ids[0] {
					steps = append(steps, f[2])
				}
				if slices.Contains(until, line) {
					return line
				}
			}
			t.Fatalf("%s: the process ended before it said %q; stderr:\n%s", q.backend, until, p.Stderr())
			return ""
		}
		kill := func(p child) {
			if err := p.Cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Rest(t, patience); !killedBy(err, syscall.SIGKILL) {
				t.Fatalf("%s: the process ended with %v before the kill; stderr:\n%s", q.backend, err, p.Stderr())
			}
		}
		first := startChild(t, jobChildEnv, cfg)
		read(first, "returned "+ids[0]) // the job done, its mark written, the ack never made
		kill(first)

		cfg.Freeze, cfg.Faults, cfg.Seed = nil, true, 1
		second := startChild(t, jobChildEnv, cfg)
		if read(second, "finished "+ids[0], "returned "+ids[0]) != "finished "+ids[0] { // the redelivery, answered from the mark
			kill(second)
			t.Fatalf("%s: the redelivery of the job done ran it again: steps begun %v", q.backend, steps)
		}
		deadline := time.Now().Add(time.Minute)
		for backlog(t, q.mb) != 0 { // the ack, through the faults
			if time.Now().After(deadline) {
				t.Fatalf("%s: the queue still holds the job a minute after its redelivery was answered; stderr:\n%s", q.backend, second.Stderr())
			}
			time.Sleep(200 * time.Millisecond)
		}
		kill(second)
		t.Logf("%s: steps begun over both processes: %v", q.backend, steps)
		if strings.Join(steps, " ") != "0 1 2 3 4" {
			t.Errorf("%s: steps begun %v, want 0 to 4 once: the redelivery of a job done ran it again", q.backend, steps)
		}
	})
}
