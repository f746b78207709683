package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/examples/internal/worker"
	"github.com/sqsloop/sqsloop/examples/internal/worker/workertest"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// The main job on a database, interrupted and run again: the first run
// (-mailbox) is shut down part-way (what Ctrl+C does); the second finds the
// rest waiting, says how many, enqueues nothing, and finishes them: every
// file job acked once across the two runs (those in flight at the shutdown
// were acked by the first), the malformed job moved to the dead-letter
// queue at once, the failing job dead-lettered by the redrive policy, the
// queue drained. On SQLite in virtual time; on PostgreSQL (PG_DSN) on the wall
// clock.
func TestWorkerOnADatabaseFinishesAnInterruptedRun(t *testing.T) {
	dir := workertest.Files(t, 60, "f")
	twoRuns := func(t *testing.T, mailbox string) {
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		o := options{Options: worker.Options{Dir: dir, Slow: 20 * time.Millisecond, Chunks: 16, Concurrency: 8, Progress: 100 * time.Millisecond}, mailbox: mailbox}
		ctx, cancel := context.WithCancel(context.Background())
		// The user's Ctrl+C, part-way through: once progress shows a job acked.
		first, err := o.run(ctx, &lifecycle.LoopGroup{Signals: []os.Signal{}}, cancelOnAck(cancel), log)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if first.Drained || first.Stats.Acked == 0 || !first.Enqueued {
			t.Fatalf("first run: enqueued %v, acked %d, drained %v; want it stopped part-way", first.Enqueued, first.Stats.Acked, first.Drained)
		}
		var out bytes.Buffer
		second, err := o.run(context.Background(), &lifecycle.LoopGroup{Signals: []os.Signal{}}, &out, log)
		if err != nil {
			t.Fatal(err)
		}
		second.Print(&out)
		t.Logf("first run acked %d; second run:\n%s", first.Stats.Acked, out.String())
		if second.Enqueued || second.Waiting == 0 || !strings.Contains(out.String(), fmt.Sprintf("found %d jobs waiting", second.Waiting)) {
			t.Errorf("second run: enqueued %v, waiting %d; want none enqueued and the waiting jobs reported", second.Enqueued, second.Waiting)
		}
		// 60 files, the stuck job and the malformed one (acked once its
		// copy is in the dead-letter queue), each acked once; the failing
		// job never.
		if acked := first.Stats.Acked + second.Stats.Acked; acked != 62 || !second.Drained {
			t.Errorf("acked %d + %d across the runs, drained %v; want 62 and drained", first.Stats.Acked, second.Stats.Acked, second.Drained)
		}
		if poisoned := first.Stats.Poisoned + second.Stats.Poisoned; poisoned != 1 {
			t.Errorf("poisoned %d + %d across the runs, want the malformed job once", first.Stats.Poisoned, second.Stats.Poisoned)
		}
		if first.DeadLettered+second.DeadLettered != 1 {
			t.Errorf("dead-lettered %d + %d, want the failing job once", first.DeadLettered, second.DeadLettered)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "jobs.db")
		synctest.Test(t, func(t *testing.T) { twoRuns(t, "sqlite:"+path) })
	})
	t.Run("postgres", func(t *testing.T) {
		twoRuns(t, sqlharness.FreshDatabase(t))
	})
}

// cancelOnAck is the worker's output that calls its func once a progress
// line shows a job acked (the monitor prints each line in one Write).
type cancelOnAck context.CancelFunc

func (c cancelOnAck) Write(p []byte) (int, error) {
	if m := regexp.MustCompile(`^\[[ 0-9.]+s\] acked (\d+)`).FindSubmatch(p); m != nil && string(m[1]) != "0" {
		c()
	}
	return len(p), nil
}
