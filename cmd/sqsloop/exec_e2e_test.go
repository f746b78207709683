package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// workerFlags of the tests: a short lease, so that a silent handler loses
// it within seconds, short long polls, and an exit once the queue is done.
var fastWorker = []string{"--visibility-timeout", "2s", "--wait-time", "1s", "--exit-when-idle", "4s"}

// execArgs is `sqsloop exec` on queue with the test's flags, running the
// shell script with the file runs as $1.
func execArgs(queue, flags []string, script, runs string) []string {
	args := append([]string{"exec"}, queue...)
	args = append(args, flags...)
	return append(args, "--", "sh", "-c", script, "sh", runs)
}

// A command that prints a line every 0.5 s for 6 s (three times the 2 s
// visibility timeout) keeps its message: it runs once and is acked.
func TestExecBeatingCommandRunsOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 2)
		b.run(t, "", append([]string{"send", "job"}, queue...)...)
		runs := filepath.Join(t.TempDir(), "runs")
		script := `read body; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "tick $i"; sleep 0.5; done; echo "$body $SQSLOOP_RECEIVE_COUNT" >> "$1"`
		p := b.start(t, "", execArgs(queue, fastWorker, script, runs)...)
		if err := p.wait(t); err != nil {
			t.Fatalf("exec: %v; stderr:\n%s", err, p.stderr.String())
		}
		if got, want := lines(t, runs), []string{"job 1"}; !slices.Equal(got, want) {
			t.Errorf("runs (body, receive count) = %q, want %q; stderr:\n%s", got, want, p.stderr.String())
		}
		if got := b.counts(t, queue); got != (counts{}) {
			t.Errorf("after the run: %+v, want every count 0 (acked)", got)
		}
		if !strings.Contains(p.stderr.String(), "tick 12") || !strings.Contains(p.stderr.String(), "message_id=") {
			t.Errorf("the command's output is not logged line by line with the message ID; stderr:\n%s", p.stderr.String())
		}
	})
}

// A command that prints nothing for 6 s loses its lease: its process group
// (itself and what it started) is killed, the message runs again, and after
// the queue's max receive count (2) it is in the dead-letter queue.
func TestExecSilentCommandLosesLease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 2)
		b.run(t, "", append([]string{"send", "job"}, queue...)...)
		runs := filepath.Join(t.TempDir(), "runs")
		script := `echo "start $SQSLOOP_RECEIVE_COUNT" >> "$1"; echo "pid $$" >> "$1"
(sleep 6; echo "orphan done" >> "$1") & echo "pid $!" >> "$1"
sleep 6; echo done >> "$1"`
		p := b.start(t, "", execArgs(queue, fastWorker, script, runs)...)
		if err := p.wait(t); err != nil {
			t.Fatalf("exec: %v; stderr:\n%s", err, p.stderr.String())
		}
		var starts, pids []string
		for _, l := range lines(t, runs) {
			switch {
			case strings.HasPrefix(l, "start "):
				starts = append(starts, l)
			case strings.HasPrefix(l, "pid "):
				pids = append(pids, strings.TrimPrefix(l, "pid "))
			default:
				t.Errorf("the command (or its child) ran to its end: %q; its process group was not killed", l)
			}
		}
		if want := []string{"start 1", "start 2"}; !slices.Equal(starts, want) {
			t.Errorf("runs = %q, want %q; stderr:\n%s", starts, want, p.stderr.String())
		}
		for _, s := range pids {
			pid, _ := strconv.Atoi(s)
			if alive(pid) {
				t.Errorf("process %d of a command whose lease was lost is still running", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if got, want := b.counts(t, queue), (counts{DeadLettered: 1}); got != want {
			t.Errorf("after the runs: %+v, want %+v", got, want)
		}
	})
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err) // no /proc: Kill's answer stands
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// --poison-exit-code 3 and a command exiting 3 puts the message in the
// dead-letter queue on its first delivery, though the queue allows 5.
func TestExecPoisonExitCode(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, dlq := b.create(t, 5)
		b.run(t, "", append([]string{"send", "poison"}, queue...)...)
		runs := filepath.Join(t.TempDir(), "runs")
		script := `echo "run $SQSLOOP_RECEIVE_COUNT" >> "$1"; exit 3`
		p := b.start(t, "", execArgs(queue, append(slices.Clone(fastWorker), "--poison-exit-code", "3"), script, runs)...)
		if err := p.wait(t); err != nil {
			t.Fatalf("exec: %v; stderr:\n%s", err, p.stderr.String())
		}
		if got, want := lines(t, runs), []string{"run 1"}; !slices.Equal(got, want) {
			t.Errorf("runs = %q, want %q", got, want)
		}
		if got, want := b.counts(t, queue), (counts{DeadLettered: 1}); got != want {
			t.Errorf("after the run: %+v, want %+v", got, want)
		}
		if got := b.run(t, "", append([]string{"peek"}, dlq...)...); got != "poison\n" {
			t.Errorf("peek of the dead-letter queue = %q, want %q", got, "poison\n")
		}
	})
}

// SIGTERM to `sqsloop exec` drains: the commands running finish (within
// the budget), each message is acked, and sqsloop exits 0.
func TestExecSIGTERMDrainsFinishing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 5)
		b.run(t, "", append([]string{"send", "a", "b", "c"}, queue...)...)
		runs := filepath.Join(t.TempDir(), "runs")
		script := `read body; echo "start $body" >> "$1"; for i in 1 2 3 4 5 6; do echo working; sleep 0.5; done; echo "done $body" >> "$1"`
		flags := []string{"--visibility-timeout", "2s", "--wait-time", "1s", "--concurrency", "3", "--shutdown-timeout", "30s"}
		p := b.start(t, "", execArgs(queue, flags, script, runs)...)
		waitFor(t, "3 commands running", func() bool { return len(lines(t, runs)) == 3 })
		p.signal(t, syscall.SIGTERM)
		if err := p.wait(t); err != nil {
			t.Fatalf("exec after SIGTERM: %v, want exit status 0; stderr:\n%s", err, p.stderr.String())
		}
		var done []string
		for _, l := range lines(t, runs) {
			if strings.HasPrefix(l, "done ") {
				done = append(done, l)
			}
		}
		slices.Sort(done)
		if want := []string{"done a", "done b", "done c"}; !slices.Equal(done, want) {
			t.Errorf("finished = %q, want %q; stderr:\n%s", done, want, p.stderr.String())
		}
		if got := b.counts(t, queue); got != (counts{}) {
			t.Errorf("after the drain: %+v, want every count 0 (all acked)", got)
		}
	})
}

// SIGTERM to `sqsloop exec` with commands that outlast the drain's budget:
// when it ends, their process groups get SIGTERM, and their messages are
// given back, visible at once: nothing is lost.
func TestExecSIGTERMDrainStopsOverBudget(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 5)
		b.run(t, "", append([]string{"send", "a", "b"}, queue...)...)
		runs := filepath.Join(t.TempDir(), "runs")
		script := `read body; trap 'echo "term $body" >> "$1"; exit 143' TERM; echo "start $body" >> "$1"
while :; do echo working; sleep 0.2; done`
		flags := []string{"--visibility-timeout", "2s", "--wait-time", "1s", "--concurrency", "2", "--shutdown-timeout", "1s", "--kill-grace", "10s"}
		p := b.start(t, "", execArgs(queue, flags, script, runs)...)
		waitFor(t, "2 commands running", func() bool { return len(lines(t, runs)) == 2 })
		p.signal(t, syscall.SIGTERM)
		if err := p.wait(t); exitCode(err) != 1 {
			t.Errorf("exec after a drain that stopped commands: exit status %d, want 1; stderr:\n%s", exitCode(err), p.stderr.String())
		}
		var term []string
		for _, l := range lines(t, runs) {
			if strings.HasPrefix(l, "term ") {
				term = append(term, l)
			}
		}
		slices.Sort(term)
		if want := []string{"term a", "term b"}; !slices.Equal(term, want) {
			t.Errorf("signalled = %q, want %q; stderr:\n%s", term, want, p.stderr.String())
		}
		if got, want := b.counts(t, queue), (counts{Visible: 2}); got != want {
			t.Errorf("after the drain: %+v, want %+v (given back)", got, want)
		}
	})
}

// What beats is what --beat-on and --beat-file say, and an exit status
// other than 0 nacks: with a 2 s visibility timeout and a queue that moves
// a message to the dead-letter queue after 2 receives, each case's command
// runs 6 s doing one kind of thing (or fails at once).
func TestExecBeatOptionsAndExitStatus(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, c := range []struct {
			name   string
			flags  []string
			script string
			runs   int  // how many times the command runs
			acked  bool // else the message ends in the dead-letter queue
		}{
			{"beat-file, output not beating", []string{"--beat-on", "none", "--beat-file"},
				`for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo tick; touch "$SQSLOOP_BEAT_FILE"; sleep 0.5; done`, 1, true},
			{"stdout not beating with --beat-on stderr", []string{"--beat-on", "stderr"},
				`for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo tick; sleep 0.5; done`, 2, false},
			{"stderr beating with --beat-on stderr", []string{"--beat-on", "stderr"},
				`for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo tick >&2; sleep 0.5; done`, 1, true},
			{"exit status 1 nacks", nil, `exit 1`, 2, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				queue, _ := b.create(t, 2)
				b.run(t, "", append([]string{"send", "job"}, queue...)...)
				runs := filepath.Join(t.TempDir(), "runs")
				script := `echo run >> "$1"; ` + c.script
				p := b.start(t, "", execArgs(queue, append(slices.Clone(fastWorker), c.flags...), script, runs)...)
				if err := p.wait(t); err != nil {
					t.Fatalf("exec: %v; stderr:\n%s", err, p.stderr.String())
				}
				if got := len(lines(t, runs)); got != c.runs {
					t.Errorf("ran %d times, want %d; stderr:\n%s", got, c.runs, p.stderr.String())
				}
				want := counts{DeadLettered: 1}
				if c.acked {
					want = counts{}
				}
				if got := b.counts(t, queue); got != want {
					t.Errorf("after the runs: %+v, want %+v", got, want)
				}
			})
		}
	})
}
