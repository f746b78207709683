package failurelog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// recorder keeps the records logged to it.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// take returns the records logged since the last call.
func (r *recorder) take() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.recs
	r.recs = nil
	return out
}

func count(recs []slog.Record, level slog.Level) int {
	n := 0
	for _, r := range recs {
		if r.Level == level {
			n++
		}
	}
	return n
}

func attrs(r slog.Record) map[string]slog.Value {
	out := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool {
		out[a.Key] = a.Value
		return true
	})
	return out
}

// Burst failures a window go at WARN with the message's ID, receive count
// and error (and the caller's attributes); the rest at DEBUG, counted, and
// the count goes in one WARN line at the first failure after the window, or
// at Flush.
func TestRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		l := New(slog.New(rec), "consumer")
		fail := func(n int) {
			for i := range n {
				m := &sqsloop.Message{ID: fmt.Sprint("m", i), Body: "BODY", ReceiptHandle: "HANDLE", ReceiveCount: 2}
				l.Failed("consumer: handler failed", m, errors.New("boom"), slog.String("retry_in", "2s"))
			}
		}
		fail(Burst + 15)
		recs := rec.take()
		if warn, debug := count(recs, slog.LevelWarn), count(recs, slog.LevelDebug); warn != Burst || debug != 15 {
			t.Fatalf("%d failures at once: %d WARN, %d DEBUG; want %d and 15", Burst+15, warn, debug, Burst)
		}
		a := attrs(recs[0])
		if recs[0].Message != "consumer: handler failed" || a["message_id"].String() != "m0" || a["receive_count"].Int64() != 2 ||
			a["error"].String() != "boom" || a["retry_in"].String() != "2s" || len(a) != 4 {
			t.Errorf("first line %q %v, want the message's ID, receive count, error and retry_in only", recs[0].Message, a)
		}

		time.Sleep(Window - time.Millisecond)
		fail(1)
		if recs := rec.take(); count(recs, slog.LevelWarn) != 0 {
			t.Errorf("within the window: %d WARN lines, want none", count(recs, slog.LevelWarn))
		}
		time.Sleep(time.Millisecond)
		fail(1)
		recs = rec.take()
		if len(recs) != 2 || recs[0].Level != slog.LevelWarn || attrs(recs[0])["failures"].Int64() != 16 || recs[1].Level != slog.LevelWarn {
			t.Fatalf("first failure after the window: %v; want the count of the 16 not logged at WARN, then its own WARN line", recs)
		}
		if want := "consumer: 16 more handler failures were not logged at WARN (at most 10 lines per 10s; each is at DEBUG)"; recs[0].Message != want {
			t.Errorf("summary %q, want %q", recs[0].Message, want)
		}

		l.Flush()
		if recs := rec.take(); len(recs) != 0 {
			t.Errorf("Flush with nothing suppressed logged %v", recs)
		}
		fail(Burst) // Burst-1 left in the window, then 1 at DEBUG
		rec.take()
		l.Flush()
		if recs := rec.take(); len(recs) != 1 || attrs(recs[0])["failures"].Int64() != 1 {
			t.Errorf("Flush: %v, want one line counting 1", recs)
		}
	})
}
