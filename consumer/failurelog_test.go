package consumer

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/failurelog"
)

// A failing handler leaves a WARN line at the default level (INFO) with
// the message's ID, receive count, error and retry delay, and never its
// body or receipt handle; past failurelog.Burst lines a window, one line
// counts the rest, at the latest when Run returns. A panic and a
// Permanent failure have lines of their own, not this one.
func TestHandlerFailureIsLoggedAtWarn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		const n = failurelog.Burst + 5
		send(t, q, bodies(n)...)
		send(t, q, "panic-BODY")
		var out syncBuffer
		var handles sync.Map
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			handles.Store(m.ReceiptHandle, true)
			if m.Body == "panic-BODY" {
				panic("boom")
			}
			return errors.New("charge declined")
		}, Config{Concurrency: n + 1, WaitTime: time.Second, Backoff: func(int) time.Duration { return time.Hour },
			Logger: slog.New(slog.NewJSONHandler(&out, nil))})
		stop := start(t, c)
		time.Sleep(5 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		var failures, summaries int
		for _, r := range records(t, text) {
			msg, _ := r["msg"].(string)
			switch {
			case strings.HasPrefix(msg, "consumer: handler failed"):
				failures++
				if id, _ := r["message_id"].(string); r["level"] != "WARN" || id == "" ||
					r["receive_count"] != 1.0 || r["error"] != "charge declined" || r["retry_in"] != "1h0m0s" {
					t.Errorf("failure line %v: want WARN with message_id, receive_count 1, the error and retry_in 1h0m0s", r)
				}
			case strings.Contains(msg, "more handler failures were not logged at WARN"):
				summaries++
				if r["level"] != "WARN" || r["failures"] != 5.0 {
					t.Errorf("summary %v, want WARN counting 5", r)
				}
			}
		}
		if failures != failurelog.Burst || summaries != 1 {
			t.Errorf("%d failures: %d WARN lines and %d summaries, want %d (the panic has its ERROR line) and 1:\n%s",
				n+1, failures, summaries, failurelog.Burst, text)
		}
		if strings.Contains(text, "BODY") || strings.Contains(text, "job-") {
			t.Error("a message body is logged")
		}
		handles.Range(func(h, _ any) bool {
			if strings.Contains(text, h.(string)) {
				t.Errorf("a receipt handle is logged: %s", h)
			}
			return true
		})
	})
}
