package consumer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes (a log's sink).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records decodes a JSONHandler's output.
func records(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		recs = append(recs, r)
	}
	return recs
}

// What the consumer and its lease owner log, at DEBUG under
// slog.JSONHandler, over a run with acks, a failure, a stale receipt
// handle, two handlers that never beat, and a drain: the effective
// configuration at start (a zero VisibilityTimeout reads the queue's 30s,
// a zero Extension the lease owner's choice); durations
// as text, never nanoseconds; one WARN for a handler that never beat, the
// second one counted and logged as a plain lost lease; lost-lease reasons
// said once; DEBUG records of extension batches; the drain's start and end
// with counts; and never a receipt handle nor a body, at any level.
func TestLogsSayWhatHappenedAndNoSecrets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
		if err != nil {
			t.Fatal(err)
		}
		bodies := []string{"BODY-ok", "BODY-fail", "BODY-stale", "BODY-silent-1", "BODY-silent-2", "BODY-long"}
		for _, body := range bodies {
			send(t, q, body)
		}
		var out syncBuffer
		log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		var handles sync.Map
		c, err := New(q, func(ctx context.Context, m *sqsloop.Message) error {
			handles.Store(m.ReceiptHandle, true)
			if m.ReceiveCount > 1 {
				return nil
			}
			switch m.Body {
			case "BODY-fail":
				return errors.New("failed on purpose")
			case "BODY-stale": // another receive's handle: this one's extension fails
				if _, err := q.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: m.ReceiptHandle}}); err != nil {
					return err
				}
				for range 7 { // beats, so it is extended, with a stale handle
					heartbeat.Beat(ctx)
					time.Sleep(60 * time.Second)
				}
			case "BODY-silent-1", "BODY-silent-2":
				time.Sleep(400 * time.Second) // never beats: the lease lapses
			case "BODY-long":
				for range 10 {
					heartbeat.Beat(ctx)
					time.Sleep(60 * time.Second)
				}
			}
			return nil
		}, Config{Concurrency: 6, WaitTime: time.Second, Logger: log, Backoff: func(int) time.Duration { return time.Hour }})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Run(context.Background()) }()
		time.Sleep(15 * time.Minute)
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		text := out.String()
		handles.Range(func(h, _ any) bool {
			if strings.Contains(text, h.(string)) {
				t.Errorf("a receipt handle is logged: %s", h)
			}
			return true
		})
		if strings.Contains(text, "BODY-") {
			t.Error("a message body is logged")
		}
		if strings.Contains(text, "lease lost: visibility: lease lost") || strings.Contains(text, "visibility: lease lapsed") {
			t.Errorf("a lost lease's reason stutters:\n%s", text)
		}
		var started, neverBeat, lostSilent, lostStale, extensionBatches, drainBegan, drainEnded int
		for _, r := range records(t, text) {
			for k, v := range r {
				if _, isNumber := v.(float64); isNumber && (strings.HasSuffix(k, "timeout") || k == "interval" || k == "extension" || k == "budget" || k == "took" || k == "delay") {
					t.Errorf("%q logs the duration %s as a number: %v", r["msg"], k, v)
				}
			}
			msg, _ := r["msg"].(string)
			switch {
			case msg == "consumer: started":
				started++
				if r["visibility_timeout"] != "30s" || r["visibility_timeout_from"] != "queue" || r["interval"] != "6s" ||
					r["extension"] != "chosen, 33s–1h0m0s" || r["wait_time"] != "1s" ||
					r["shutdown_timeout"] != "Shutdown's deadline, else 25s" || r["concurrency"] != 6.0 || r["max_extension"] != "12h0m0s" || !strings.HasPrefix(r["backoff"].(string), "1h0m0s") {
					t.Errorf("the start record misses the effective configuration: %v", r)
				}
			case strings.HasPrefix(msg, "visibility: a handler never beat its heartbeat"):
				neverBeat++
			case msg == "visibility: lease lost; the message may be delivered again" && r["never_beat"] == true:
				lostSilent++
				if r["reason"] != "no_beats" {
					t.Errorf("lost lease record %v, want reason no_beats", r)
				}
			case msg == "visibility: lease lost; the message may be delivered again" && r["reason"] == "receipt_handle_expired":
				lostStale++
				if e, _ := r["error"].(string); !strings.Contains(e, "receipt handle expired") || strings.Contains(e, "lease lost") {
					t.Errorf("stale lease record %v: want the error once, not wrapped in its lost lease", r)
				}
			case msg == "visibility: extension batch":
				extensionBatches++
			case msg == "consumer: drain began; receiving stopped":
				drainBegan++
			case msg == "consumer: drain ended":
				drainEnded++
				if _, ok := r["given_back"]; !ok {
					t.Errorf("drain end without counts: %v", r)
				}
			}
		}
		if started != 1 || neverBeat != 1 || lostSilent != 1 || lostStale != 1 || extensionBatches == 0 || drainBegan != 1 || drainEnded != 1 {
			t.Errorf("start %d, never-beat WARN %d (want 1), later never-beat losses %d (want 1), stale %d (want 1), extension batches %d, drain %d/%d:\n%s",
				started, neverBeat, lostSilent, lostStale, extensionBatches, drainBegan, drainEnded, text)
		}
		if st := c.Stats(); st.LeasesLostNeverBeat != 2 {
			t.Errorf("Stats.LeasesLostNeverBeat %d, want 2 (the two silent handlers): %+v", st.LeasesLostNeverBeat, st)
		}
	})
}
