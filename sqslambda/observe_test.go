package sqslambda

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/visibility"
)

// recorder is an Observer that keeps what it is told, by message body.
// Safe for concurrent use.
type recorder struct {
	mu       sync.Mutex
	starts   []string                          // bodies, in order
	ends     map[string][]sqsloop.ProcessEvent // by body
	settled  map[string][]string               // kinds of the entries, by body
	lost     map[string]sqsloop.LeaseLostEvent // by body
	wrongCtx []string                          // ProcessEnds not given ProcessStart's context
	others   int                               // Received, Drain and QueueRead calls
}

// runOf is the key of the value recorder.ProcessStart puts in the context.
type runOf struct{}

func newRecorder() *recorder {
	return &recorder{ends: map[string][]sqsloop.ProcessEvent{}, settled: map[string][]string{}, lost: map[string]sqsloop.LeaseLostEvent{}}
}

func (r *recorder) Received(context.Context, sqsloop.ReceiveEvent) {
	r.mu.Lock()
	r.others++
	r.mu.Unlock()
}
func (r *recorder) Drain(sqsloop.DrainEvent) { r.mu.Lock(); r.others++; r.mu.Unlock() }

func (r *recorder) QueueRead(sqsloop.QueueEvent) { r.mu.Lock(); r.others++; r.mu.Unlock() }

func (r *recorder) ProcessStart(ctx context.Context, m *sqsloop.Message) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, m.Body)
	return context.WithValue(ctx, runOf{}, m.ID)
}

func (r *recorder) ProcessEnd(ctx context.Context, m *sqsloop.Message, e sqsloop.ProcessEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Value(runOf{}) != m.ID {
		r.wrongCtx = append(r.wrongCtx, m.Body)
	}
	r.ends[m.Body] = append(r.ends[m.Body], e)
}

func (r *recorder) Settled(e sqsloop.SettleEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, en := range e.Entries {
		r.settled[en.Message.Body] = append(r.settled[en.Message.Body], en.Kind)
	}
}

func (r *recorder) LeaseLost(m *sqsloop.Message, e sqsloop.LeaseLostEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost[m.Body] = e
}

// outcomes returns each body's outcomes, and checks that every run
// started ended exactly once with the context its start returned, and
// that nothing else was reported.
func (r *recorder) outcomes(t *testing.T) map[string]string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for body, ends := range r.ends {
		if len(ends) != 1 {
			t.Errorf("%s: %d ProcessEnds, want 1", body, len(ends))
		}
		out[body] = ends[0].Outcome
	}
	for _, body := range r.starts {
		if _, ok := r.ends[body]; !ok {
			t.Errorf("%s: started, never ended", body)
		}
	}
	if len(r.starts) != len(r.ends) {
		t.Errorf("%d ProcessStarts (%v), %d messages ended", len(r.starts), r.starts, len(r.ends))
	}
	if len(r.wrongCtx) > 0 || r.others > 0 {
		t.Errorf("ProcessEnd without ProcessStart's context: %v; Received or Drain calls: %d", r.wrongCtx, r.others)
	}
	return out
}

// The deadline of TestDeadlineCutsTheBatchOff, observed: job-0 … job-3
// acked, job-4 given back (its handler returned ErrDeadline), job-5 …
// job-9, never run, not reported as runs; every handler ran with the
// context ProcessStart returned, and each run ended once.
func TestObserverSeesTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		var wrongCtx []string
		var mu sync.Mutex
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			if ctx.Value(runOf{}) != m.ID || heartbeat.FromContext(ctx) == nil {
				mu.Lock()
				wrongCtx = append(wrongCtx, m.Body)
				mu.Unlock()
			}
			select {
			case <-time.After(time.Second):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}, Config{Concurrency: 1, Observer: rec})
		if _, err := h.Handle(invocation(t, 6*time.Second), tenRecords()); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"job-0": "acked", "job-1": "acked", "job-2": "acked", "job-3": "acked", "job-4": "given_back"}
		if got := rec.outcomes(t); !maps.Equal(got, want) {
			t.Errorf("outcomes %v, want %v", got, want)
		}
		if len(wrongCtx) > 0 {
			t.Errorf("handlers of %v did not run with ProcessStart's context and a heartbeat", wrongCtx)
		}
		if e := rec.ends["job-4"][0]; !errors.Is(e.Err, ErrDeadline) || e.Duration != 500*time.Millisecond {
			t.Errorf("job-4's event %+v: want ErrDeadline after 500ms", e)
		}
	})
}

// A handler that ignores its context is reported abandoned before Handle
// returns, with how long it ran until then; when it returns later, nothing
// more is reported.
func TestObserverSeesAnAbandonedHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			if m.Body == "job-1" {
				time.Sleep(time.Minute) // ignores ctx
			}
			return nil
		}, Config{Concurrency: 1, Observer: rec})
		ev := tenRecords()
		ev.Records = ev.Records[:3]
		if _, err := h.Handle(invocation(t, 6*time.Second), ev); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"job-0": "acked", "job-1": "abandoned"}
		if got := rec.outcomes(t); !maps.Equal(got, want) {
			t.Errorf("outcomes when Handle returned %v, want %v", got, want)
		}
		if d := rec.ends["job-1"][0].Duration; d != 4875*time.Millisecond {
			t.Errorf("abandoned after %v, want 4.875s (the cut-off and a quarter of the margin)", d)
		}
		time.Sleep(2 * time.Minute) // job-1 returns nil, too late
		if got := rec.outcomes(t); !maps.Equal(got, want) {
			t.Errorf("outcomes once job-1 returned %v, want %v still", got, want)
		}
	})
}

// With a client, the lease owner reports to the same Observer: a record
// whose handler never beats loses its lease at the queue's 3 s visibility
// timeout (LeaseLost, no_beats, never beat), and its run ends lease_lost
// with NeverBeat although the handler returned nil.
func TestObserverSeesALostLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		send(t, q, false, "silent")
		ev := receiveEvent(t, q, 1, 3*time.Second)
		rec := newRecorder()
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			time.Sleep(10 * time.Second) // never beats
			return nil
		}, Config{OpenQueue: opener(t, q, nil), Observer: rec})
		if _, err := h.Handle(invocation(t, time.Minute), ev); err != nil {
			t.Fatal(err)
		}
		if got := rec.outcomes(t); got["silent"] != "lease_lost" || !rec.ends["silent"][0].NeverBeat {
			t.Errorf("outcome %v (%+v), want lease_lost, never beat", got, rec.ends["silent"])
		}
		if l, ok := rec.lost["silent"]; !ok || l.Reason != sqsloop.LostNoBeats || !l.NeverBeat {
			t.Errorf("LeaseLost %+v (reported: %v), want no_beats, never beat", l, ok)
		}
		if st := h.Stats(); st.LateAcked != 1 || st.LeasesLost != 1 {
			t.Errorf("stats %+v: want one late ack, one lease lost", st)
		}
	})
}

// On a FIFO queue with a client: the records skipped after A2's failure
// (A3) are no handler runs, so they have no ProcessStart or ProcessEnd;
// their give-back is reported as the lease owner's batch call (a
// give_back entry), beside A2's nack, whose run ends nacked with its
// back-off.
func TestObserverSeesSkippedRecordsGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		send(t, q, true, "ok A1", "fail A2", "ok A3", "ok B1")
		ev := receiveEvent(t, q, 4, 30*time.Second)
		rec := newRecorder()
		h := mustNew(t, byBody(nil), Config{OpenQueue: opener(t, q, nil), Observer: rec,
			Backoff: func(int) time.Duration { return 10 * time.Second }})
		if _, err := h.Handle(invocation(t, time.Minute), ev); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"ok A1": "acked", "fail A2": "nacked", "ok B1": "acked"}
		if got := rec.outcomes(t); !maps.Equal(got, want) {
			t.Errorf("outcomes %v, want %v (A3 never ran)", got, want)
		}
		if d := rec.ends["fail A2"][0].Delay; d != 10*time.Second {
			t.Errorf("A2's delay %v, want the 10s back-off", d)
		}
		if got := rec.settled; !slices.Equal(got["fail A2"], []string{"nack"}) || !slices.Equal(got["ok A3"], []string{"give_back"}) ||
			len(got["ok A1"])+len(got["ok B1"]) != 0 {
			t.Errorf("settle entries by record %v: want A2 nacked, A3 given back, nothing for the processed ones", got)
		}
	})
}

// leasepage draws a Lambda invocation's records in flight: while a record
// that beats runs for 10 s on a 3 s visibility timeout, the page lists it
// running, extended, its lease past the first 3 s, beats seen; once
// Handle returns nothing is in flight and the run is counted acked.
func TestLeasePageShowsAnInvocationsRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 3 * time.Second, MaxReceiveCount: 5})
		send(t, q, false, "long job")
		ev := receiveEvent(t, q, 1, 3*time.Second)
		page := leasepage.New(leasepage.Options{})
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			for range 20 {
				heartbeat.Beat(ctx)
				time.Sleep(500 * time.Millisecond)
			}
			return nil
		}, Config{OpenQueue: opener(t, q, nil), Observer: page})
		type pageJSON struct {
			InFlight []struct {
				MessageID  string    `json:"message_id"`
				State      string    `json:"state"`
				ReceivedAt time.Time `json:"received_at"`
				Deadline   time.Time `json:"deadline"`
				Extensions int       `json:"extensions"`
				SinceBeat  *float64  `json:"since_beat_seconds"`
			} `json:"in_flight"`
			Outcomes map[string]int64 `json:"outcomes"`
		}
		read := func() pageJSON {
			w := httptest.NewRecorder()
			page.ServeHTTP(w, httptest.NewRequest("GET", "/debug/sqsloop?format=json", nil))
			var v pageJSON
			if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
				t.Errorf("page JSON: %v", err)
			}
			return v
		}
		during := make(chan pageJSON)
		go func() {
			time.Sleep(5 * time.Second)
			during <- read()
		}()
		if _, err := h.Handle(invocation(t, time.Minute), ev); err != nil {
			t.Fatal(err)
		}
		v := <-during
		if len(v.InFlight) != 1 {
			t.Fatalf("in flight at 5 s: %+v, want the record", v.InFlight)
		}
		l := v.InFlight[0]
		t.Logf("at 5 s: %s %s, %d extensions, deadline %v after its receive", l.MessageID, l.State, l.Extensions, l.Deadline.Sub(l.ReceivedAt))
		if l.MessageID != ev.Records[0].MessageId || l.State != "running" || l.Extensions < 1 ||
			l.Deadline.Sub(l.ReceivedAt) <= 5*time.Second || l.SinceBeat == nil {
			t.Errorf("in flight at 5 s: %+v: want the record running, extended past 5 s, beats seen", l)
		}
		after := read()
		if len(after.InFlight) != 0 || after.Outcomes["acked"] != 1 {
			t.Errorf("after Handle: in flight %+v, outcomes %v: want none in flight, one acked", after.InFlight, after.Outcomes)
		}
	})
}

// A record received a visibility timeout or more before its invocation
// began (an old ApproximateFirstReceiveTimestamp, as AWS's sample events
// carry) had lost its lease before its handler could start: with a client
// it is not run, it is reported failed, and its lost lease has a reason of
// its own, lapsed_before_start, with a WARN that says so, not the one about
// a handler that never beat its heartbeat; the others of the batch run.
func TestRecordLapsedBeforeTheInvocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		send(t, q, false, "ok old", "ok new")
		ev := receiveEvent(t, q, 2, 30*time.Second)
		// An hour ago, as an old event replayed (synctest's clock starts in
		// 2000, before the sample events' 2018).
		ev.Records[0].Attributes[sqsloop.AttrApproximateFirstReceiveTimestamp] = strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
		rec := newRecorder()
		log, l := newLogger()
		var r runs
		h := mustNew(t, byBody(&r), Config{OpenQueue: opener(t, q, nil), Observer: rec, Logger: log})
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(resp), idsOf(ev, 1); !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want the old record %v", got, want)
		}
		if got := r.get(); !slices.Equal(got, []string{"ok new"}) {
			t.Errorf("ran %v, want ok new only", got)
		}
		lost, ok := rec.lost["ok old"]
		if !ok || lost.Reason != sqsloop.LostBeforeStart || lost.NeverBeat || !errors.Is(lost.Err, visibility.ErrLeaseLost) || !errors.Is(lost.Err, ErrLapsedBeforeStart) {
			t.Errorf("LeaseLost %+v (reported: %v), want lapsed_before_start, matching ErrLeaseLost and ErrLapsedBeforeStart", lost, ok)
		}
		if got := lost.Reason; got != "lapsed_before_start" {
			t.Errorf("reason %q", got)
		}
		var lapsed int
		for _, msg := range l.at(slog.LevelWarn) {
			if strings.Contains(msg, "never beat") {
				t.Errorf("WARN %q: the handler never started", msg)
			}
			if strings.Contains(msg, "received a visibility timeout or more before the invocation began") {
				lapsed++
			}
		}
		if lapsed != 1 {
			t.Errorf("%d WARN lines about the lapsed record, want 1: %q", lapsed, l.at(slog.LevelWarn))
		}
		if st := h.Stats(); st.CutOff != 1 || st.LeasesLost != 1 || st.LeasesLostNeverBeat != 0 || st.Succeeded != 1 {
			t.Errorf("stats %+v: want 1 cut off, 1 lease lost (not never-beat), 1 succeeded", st)
		}
	})
}
