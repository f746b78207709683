//go:build unix

package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/sqsloop/sqsloop/examples/internal/worker/workertest"
)

// The acceptance run of -mailbox sqlite: the program's process is killed with
// SIGKILL halfway (no drain: its leases are left to lapse), and run again on
// the same file, it says how many jobs it found waiting, enqueues none and
// finishes them, exiting 0 with the queue drained; with the jobs the first
// run acked, every file job was done. The summary counts the jobs resumed
// from their checkpoints and the chunks not read again.
func TestWorkerKilledAndRunAgainOnSQLite(t *testing.T) {
	dir := workertest.Files(t, 40, "g")
	db := "sqlite:" + filepath.Join(t.TempDir(), "jobs.db")
	fast := []string{"-mailbox", db, "-dir", dir, "-slow", "5ms", "-chunks", "20", "-progress", "300ms"}
	cmd, wait := workertest.Start(t, fast...)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first, _ := wait()
	t.Logf("first run, killed:\n%s", first)
	m := regexp.MustCompile(`enqueued (\d+) jobs`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("the first run did not say how many jobs it enqueued")
	}
	enqueued, _ := strconv.Atoi(m[1])

	_, wait = workertest.Start(t, fast...)
	second, err := wait()
	t.Logf("second run:\n%s", second)
	if err != nil {
		t.Fatalf("the second run exited with %v", err)
	}
	m = regexp.MustCompile(`found (\d+) jobs waiting in sqlite:\S+ from an earlier run`).FindStringSubmatch(second)
	if m == nil {
		t.Fatalf("the second run did not say how many jobs it found waiting")
	}
	waiting, _ := strconv.Atoi(m[1])
	if waiting < 1 || waiting > enqueued {
		t.Errorf("found %d waiting, want between 1 and the %d enqueued", waiting, enqueued)
	}
	if !regexp.MustCompile(`queue drained\s+yes`).MatchString(second) || regexp.MustCompile(`enqueued \d+ jobs`).MatchString(second) {
		t.Errorf("the second run enqueued jobs or did not drain the queue")
	}
	acked := regexp.MustCompile(`(?m)^\s+acked\s+(\d+)$`).FindStringSubmatch(second)
	if acked == nil {
		t.Fatalf("no acked line in the summary")
	}
	// The file jobs the kill cut resume from their checkpoints, saved
	// every chunk: each resumed job skips at least its first chunk. How
	// many the kill cut after a save depends on the machine's speed (on a
	// loaded one, none may have saved by then): counted, not bounded here;
	// integration's TestE2ECheckpointedJobResumesAfterSIGKILL proves the
	// resume.
	res := regexp.MustCompile(`(?m)^\s+resumed\s+(\d+) jobs from their checkpoint \((\d+) chunks not read again\)$`).FindStringSubmatch(second)
	if res == nil || !regexp.MustCompile(`(?m)^\s+skipped\s+\d+ duplicate deliveries \(already done\)$`).MatchString(second) {
		t.Fatalf("the summary lacks the resumed and skipped lines")
	}
	resumed, _ := strconv.Atoi(res[1])
	chunks, _ := strconv.Atoi(res[2])
	if resumed > waiting || chunks < resumed {
		t.Errorf("resumed %d jobs of %d waiting, %d chunks not read again; want at most the waiting, and a chunk or more per resumed job", resumed, waiting, chunks)
	}
	// Waiting: the failing job (never acked) and those the first run did
	// not ack; each acked now. On a machine so loaded that the mailbox's
	// calls time out, a lease can be lost and an ack's answer with it (the
	// delete applied, reported failed): the queue drained all the same
	// (checked above), and up to one ack per lost lease goes uncounted.
	n, _ := strconv.Atoi(acked[1])
	lost := 0
	if m := regexp.MustCompile(`(?m)^\s+leases lost\s+(\d+)$`).FindStringSubmatch(second); m != nil {
		lost, _ = strconv.Atoi(m[1])
	}
	if n > waiting-1 || n < waiting-1-lost {
		t.Errorf("the second run acked %d of the %d waiting (%d leases lost), want all but the failing job", n, waiting, lost)
	}
}
