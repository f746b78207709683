package worker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/examples/internal/worker/workertest"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// The main job end to end on the in-memory mailbox, in virtual time: every
// normal job acked, multi-entry extension batches, the stuck job's lease
// lapsed and the job redelivered, the failing job dead-lettered.
func TestWorkerDrainsTheQueue(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		body := bytes.Repeat([]byte(fmt.Sprint(i)), 1000*(i+1))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		group := &lifecycle.LoopGroup{Signals: []os.Signal{}} // os/signal cannot be used in a synctest bubble
		var out bytes.Buffer
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		sum, err := runMemory(context.Background(), t, Options{Dir: dir, Slow: 50 * time.Millisecond, Chunks: 48, Concurrency: 8, Progress: time.Second}, group, &out, log)
		if err != nil {
			t.Fatal(err)
		}
		sum.Print(&out)
		t.Log(out.String())
		if sum.Files != 20 || !sum.NormalAcked() || !sum.Drained {
			t.Fatalf("want all 20 files and the stuck job acked and the queue drained:\n%s", out.String())
		}
		if sum.Stats.LargestExtensionBatch < 2 {
			t.Fatalf("largest extension batch %d, want > 1", sum.Stats.LargestExtensionBatch)
		}
		if sum.Stats.LeasesLost < 1 || sum.Stats.Redelivered < 1 {
			t.Fatalf("the stuck job's lease must lapse and the job be redelivered: %+v", sum.Stats)
		}
		if sum.DeadLettered != 1 {
			t.Fatalf("dead-lettered %d, want the failing job", sum.DeadLettered)
		}
		if sum.Stats.Poisoned != 1 || len(sum.PoisonCounts) != 1 || sum.PoisonCounts[0] != 1 {
			t.Fatalf("poison %d, receive counts %v: want the malformed job moved on its first delivery", sum.Stats.Poisoned, sum.PoisonCounts)
		}
		for _, want := range []string{"acked ", "extensions sent", "leases lost", "redelivered", "dead-lettered", "wall time",
			"jobs enqueued     23 (20 files, 1 stuck, 1 failing, 1 malformed)",
			"poison            1 moved to the dead-letter queue at once (receive counts: 1)"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("summary lacks %q", want)
			}
		}
	})
}

// Cancelling the context (what SIGTERM does) drains: the run stops early,
// nothing is lost.
func TestWorkerShutdownLosesNothing(t *testing.T) {
	dir := workertest.Files(t, 40, "f")
	synctest.Test(t, func(t *testing.T) {
		group := &lifecycle.LoopGroup{Signals: []os.Signal{}} // os/signal cannot be used in a synctest bubble
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			time.Sleep(3 * time.Second)
			cancel()
		}()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		sum, err := runMemory(ctx, t, Options{Dir: dir, Slow: 50 * time.Millisecond, Chunks: 48, Concurrency: 8}, group, io.Discard, log)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Drained {
			t.Fatal("the queue drained before the shutdown; make the jobs longer")
		}
		if sum.Stats.Acked == 0 || sum.Stats.Acked >= 42 {
			t.Fatalf("acked %d: want some, not all", sum.Stats.Acked)
		}
		if sum.LeftInFlight != 0 {
			t.Fatalf("%d messages left in flight: the drain must ack or give back every one", sum.LeftInFlight)
		}
		if sum.Stats.AckFailed != 0 || sum.Stats.NackFailed != 0 {
			t.Fatalf("stats %+v: every in-flight job must be acked cleanly", sum.Stats)
		}
	})
}

// With -queue-url and no -send the run enqueued nothing: the summary says
// so, and judges no acks against jobs it did not send; on a queue without a
// redrive policy it names no receive count.
func TestSummaryWithoutEnqueue(t *testing.T) {
	var out bytes.Buffer
	(&Summary{Ran: true}).Print(&out)
	if !strings.Contains(out.String(), "jobs enqueued     none") {
		t.Errorf("summary claims jobs enqueued:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "dead-lettered     0 (no redrive policy)") {
		t.Errorf("summary names a redrive policy the queue does not have:\n%s", out.String())
	}
	if strings.Contains(out.String(), "every normal job acked") {
		t.Errorf("summary judges acks of jobs it did not send:\n%s", out.String())
	}
}

// runMemory runs the job on a fresh in-memory queue, as examples/worker
// does without flags.
func runMemory(ctx context.Context, t *testing.T, o Options, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) (Summary, error) {
	t.Helper()
	q, err := OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	return Run(ctx, Config{Options: o, Queue: q, Enqueue: true}, group, out, log)
}
