package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
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
		sum, err := run(context.Background(), options{dir: dir, slow: 50 * time.Millisecond, chunks: 48, concurrency: 8, progress: time.Second}, group, &out, log)
		if err != nil {
			t.Fatal(err)
		}
		sum.print(&out)
		t.Log(out.String())
		if sum.files != 20 || !sum.normalAcked() || !sum.drained {
			t.Fatalf("want all 20 files and the stuck job acked and the queue drained:\n%s", out.String())
		}
		if sum.st.LargestExtensionBatch < 2 {
			t.Fatalf("largest extension batch %d, want > 1", sum.st.LargestExtensionBatch)
		}
		if sum.st.LeasesLost < 1 || sum.st.Redelivered < 1 {
			t.Fatalf("the stuck job's lease must lapse and the job be redelivered: %+v", sum.st)
		}
		if sum.deadLettered != 1 {
			t.Fatalf("dead-lettered %d, want the failing job", sum.deadLettered)
		}
		if sum.st.Poisoned != 1 || len(sum.poisonCounts) != 1 || sum.poisonCounts[0] != 1 {
			t.Fatalf("poison %d, receive counts %v: want the malformed job moved on its first delivery", sum.st.Poisoned, sum.poisonCounts)
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
	dir := t.TempDir()
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		group := &lifecycle.LoopGroup{Signals: []os.Signal{}} // os/signal cannot be used in a synctest bubble
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			time.Sleep(3 * time.Second)
			cancel()
		}()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		sum, err := run(ctx, options{dir: dir, slow: 50 * time.Millisecond, chunks: 48, concurrency: 8}, group, io.Discard, log)
		if err != nil {
			t.Fatal(err)
		}
		if sum.drained {
			t.Fatal("the queue drained before the shutdown; make the jobs longer")
		}
		if sum.st.Acked == 0 || sum.st.Acked >= 42 {
			t.Fatalf("acked %d: want some, not all", sum.st.Acked)
		}
		if sum.leftInFlight != 0 {
			t.Fatalf("%d messages left in flight: the drain must ack or give back every one", sum.leftInFlight)
		}
		if sum.st.AckFailed != 0 || sum.st.NackFailed != 0 {
			t.Fatalf("stats %+v: every in-flight job must be acked cleanly", sum.st)
		}
	})
}

// With -queue-url and no -send the run enqueued nothing: the summary says
// so, and judges no acks against jobs it did not send; on a queue without a
// redrive policy it names no receive count.
func TestSummaryWithoutEnqueue(t *testing.T) {
	var out bytes.Buffer
	(&summary{ran: true}).print(&out)
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

// -send to a queue that does not exist fails before consuming: the worker
// says why and prints no summary (which would claim "-queue-url without
// -send").
func TestSendToAMissingQueue(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`)
	}))
	defer srv.Close()
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sum, err := run(context.Background(), options{dir: t.TempDir(), endpoint: srv.URL, queueURL: srv.URL + "/000000000000/nope", send: true},
		&lifecycle.LoopGroup{Signals: []os.Signal{}}, &out, log)
	if !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("run = %v, want ErrQueueNotFound", err)
	}
	if sum.ran {
		t.Errorf("the summary would print after a failed start:\n%s", out.String())
	}
}
