package leases

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// Adaptive lease length (Extension left zero): the extension follows the
// beats observed, within bounds, from the visibility timeout at first.

// adaptive is the Config a consumer derives for messages received with a
// 30 s visibility timeout: looked at every 6 s, the extension chosen.
func adaptive(t *testing.T, hook func(*sqsloop.Message, error)) visibility.Config {
	t.Helper()
	cfg, err := ForVisibilityTimeout(visibility.Config{OnLeaseLost: hook}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// job runs a handler on a lease of m as a consumer does: it holds msg,
// starts it, beats every beat for took (or until stop is closed, then it
// stops beating but keeps running until took), and acks it.
func job(m *Manager, msg *sqsloop.Message, beat, took time.Duration, stop <-chan struct{}) *Lease {
	l := m.Hold(msg, nil, nil)
	hb := heartbeat.New()
	l.Start(hb)
	if err := l.Begin(); err != nil {
		return l
	}
	end := time.After(took)
	t := time.NewTicker(beat)
	defer t.Stop()
	for {
		select {
		case <-end:
			l.Returned()
			l.Ack()
			return l
		case <-stop:
			stop = nil
			t.Stop()
		case <-t.C:
			hb.Beat()
		}
	}
}

// lapses records when each lease was reported lost.
type lapses struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (p *lapses) hook(m *sqsloop.Message, _ error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at == nil {
		p.at = map[string]time.Time{}
	}
	p.at[m.ID] = time.Now()
}

func (p *lapses) get(id string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.at[id]
	return at, ok
}

// A handler that beats every second gets, once 16 gaps are observed, the
// shortest extension (three Intervals, 18 s) instead of the visibility
// timeout (30 s): the same calls, and it loses its lease within
// 18 s + 6 s of its last beat instead of up to 36 s.
func TestAdaptiveExtensionShrinksForAFastBeater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lapses
		m := running(t, rec, adaptive(t, lost.hook))
		stop := make(chan struct{})
		msg := message("fast", 30*time.Second)
		done := make(chan struct{})
		go func() { defer close(done); job(m, msg, time.Second, 7*time.Minute, stop) }()

		time.Sleep(5 * time.Minute)
		exts := rec.entriesFor(opChange, "rh-fast")
		if len(exts) < 40 || exts[0].timeout != 30*time.Second || exts[len(exts)-1].timeout != 18*time.Second {
			t.Fatalf("%d extensions, first %v, last %v; want about 50, from 30s down to 18s", len(exts), exts[0].timeout, exts[len(exts)-1].timeout)
		}
		if ext, gap := m.Lengths().Choice(30 * time.Second); ext != 18*time.Second || gap != 6*time.Second {
			t.Errorf("Choice = %v, %v; want 18s from gaps of 6s (a beat at every look)", ext, gap)
		}
		close(stop)
		lastBeat := time.Now() // beats stop now (to the second)
		time.Sleep(time.Minute)
		at, ok := lost.get("fast")
		if !ok {
			t.Fatal("the lease of a handler that stopped beating was not lost")
		}
		if d := at.Sub(lastBeat); d > 24*time.Second || d < 18*time.Second {
			t.Errorf("lease lost %v after the last beat, want 18–24s (extension + interval)", d)
		}
		<-done
	})
}

// A handler that beats every 40 s cannot keep a 30 s lease: the first one
// lapses. Its next beat is observed (the lease is watched while its handler
// runs on) and the next leases get an extension that fits: the handler
// keeps them, beat after beat.
func TestAdaptiveExtensionGrowsAfterALapse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lapses
		m := running(t, rec, adaptive(t, lost.hook))
		job(m, message("first", 30*time.Second), 40*time.Second, 2*time.Minute, nil)
		if _, ok := lost.get("first"); !ok {
			t.Fatal("the first lease, 30 s for beats every 40 s, was not lost")
		}
		ext, gap := m.Lengths().Choice(30 * time.Second)
		if gap < 40*time.Second || ext < gap+9*time.Second {
			t.Fatalf("after the lapse: Choice = %v, %v; want a gap of 40s or more and an extension 1.5 Intervals above it", ext, gap)
		}
		job(m, message("second", 30*time.Second), 40*time.Second, 5*time.Minute, nil)
		if at, ok := lost.get("second"); ok {
			t.Fatalf("the second lease was lost at %v, with the extension at %v", at, ext)
		}
		for _, e := range rec.entriesFor(opChange, "rh-second") {
			if e.timeout != ext.Truncate(time.Second)+time.Second && e.timeout != ext {
				t.Fatalf("an extension asked for %v, want %v", e.timeout, ext)
			}
		}
	})
}

// Gaps seen within the first seconds say nothing of longer ones not over
// yet: 20 handlers that beat at their start and then every 30 s give 20
// gaps of 6 s (their start to that first beat, seen at the first look)
// before any 30 s gap can end. The extension stays the visibility timeout
// until the gaps were watched for that long, and no lease lapses.
func TestEarlyGapsDoNotShortenTheExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lapses
		m := running(t, rec, adaptive(t, lost.hook))
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				l := m.Hold(message(string(rune('a'+i)), 30*time.Second), nil, nil)
				hb := heartbeat.New()
				l.Start(hb)
				if err := l.Begin(); err != nil {
					t.Error(err)
					return
				}
				for range 4 {
					hb.Beat()
					time.Sleep(30 * time.Second)
				}
				l.Returned()
				l.Ack()
			})
		}
		wg.Wait()
		if ext, gap := m.Lengths().Choice(30 * time.Second); gap < 30*time.Second || ext < gap+9*time.Second {
			t.Errorf("Choice = %v, %v; want a gap of 30s or more and an extension 1.5 Intervals above it", ext, gap)
		}
		lost.mu.Lock()
		defer lost.mu.Unlock()
		if len(lost.at) != 0 {
			t.Errorf("%d leases of handlers beating every 30 s lapsed, want none", len(lost.at))
		}
	})
}

// A fixed Extension is never adapted.
func TestFixedExtensionIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		cfg, err := ForVisibilityTimeout(visibility.Config{Extension: 30 * time.Second}, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		m := running(t, rec, cfg)
		job(m, message("fixed", 30*time.Second), time.Second, 5*time.Minute, nil)
		for _, e := range rec.entriesFor(opChange, "rh-fixed") {
			if e.timeout != 30*time.Second {
				t.Fatalf("an extension asked for %v, want the fixed 30s", e.timeout)
			}
		}
		if ext, gap := m.Lengths().Choice(30 * time.Second); ext != 30*time.Second || gap != 0 {
			t.Errorf("Choice = %v, %v; want 30s and no gap", ext, gap)
		}
	})
}

// Once 16 handlers have run, a lease whose handler is expected to return
// well before its deadline is not extended: jobs of 10 s on leases of
// 30 s cost no extension.
func TestShortJobsNeedNoExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, adaptive(t, nil))
		var ids []string
		for i := range 20 {
			id := string(rune('a' + i))
			ids = append(ids, id)
			job(m, message(id, 30*time.Second), time.Second, 10*time.Second, nil)
		}
		for i, id := range ids {
			n := len(rec.entriesFor(opChange, "rh-"+id))
			switch {
			case i < minGaps && n != 1:
				t.Errorf("job %d, before 16 runs were observed: %d extensions, want 1 (at the first look, 6 s in)", i, n)
			case i >= minGaps && n != 0:
				t.Errorf("job %d, expected to return 20 s before its deadline: %d extensions, want 0", i, n)
			}
		}
	})
}

// A job longer than the others is still extended: the run times let a
// lease wait only while its handler is expected to return.
func TestAJobLongerThanExpectedIsExtended(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lapses
		m := running(t, rec, adaptive(t, lost.hook))
		for range minGaps {
			job(m, message("short", 30*time.Second), time.Second, 10*time.Second, nil)
		}
		job(m, message("long", 30*time.Second), time.Second, 2*time.Minute, nil)
		if _, ok := lost.get("long"); ok {
			t.Fatal("the lease of a job longer than the others was lost")
		}
		if n := len(rec.entriesFor(opChange, "rh-long")); n < 10 {
			t.Fatalf("%d extensions over 2 min, want one about every 6 s", n)
		}
	})
}

// A lease let go without an extension while its handler was expected to
// return is, once that time has passed, extended no further than an
// extension at the look that saw its last beat would have: a stuck
// handler loses its message as soon as it would have with an extension at
// every look. Here leases of 30 s are extended by 30 s (the floor), looked
// at every 6 s, and jobs of 10 s are expected: a handler that beats until
// 5.5 s in and then hangs must lose its lease 36 s after its receive (the
// look 6 s in, + 30 s), not 42 s (the look 12 s in, + 30 s).
func TestAWaitedLeaseLapsesAsSoonAsAnExtendedOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lapses
		cfg := adaptive(t, lost.hook)
		cfg.MinExtensionPeriod = 30 * time.Second
		m := running(t, rec, cfg)
		for range minGaps {
			job(m, message("short", 30*time.Second), time.Second, 10*time.Second, nil)
		}
		received := time.Now()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { defer close(done); job(m, message("stuck", 30*time.Second), time.Second, 2*time.Minute, stop) }()
		time.Sleep(5500 * time.Millisecond)
		close(stop)
		time.Sleep(time.Minute)
		at, ok := lost.get("stuck")
		if !ok {
			t.Fatal("the lease of a handler that stopped beating was not lost")
		}
		if d := at.Sub(received); d > 36*time.Second {
			t.Errorf("lease lost %v after the receive, want ≤ 36s (the look that saw the last beat, 6 s in, + 30 s)", d)
		}
		<-done
	})
}

// A handler's own extension (SetExtension, through its context) replaces
// the choice within the bounds, and keeps the lease of a handler that
// beats every 4 minutes.
func TestSetExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lapses
		m := running(t, rec, adaptive(t, lost.hook))
		msg := message("own", 30*time.Second)
		l := m.Hold(msg, nil, nil)
		var cur Current
		cur.Set(l)
		ctx := sqsloop.NewLeaseContext(t.Context(), &cur)
		for _, d := range []time.Duration{10 * time.Second, 2 * time.Hour} {
			if err := sqsloop.SetExtension(ctx, d); !errors.Is(err, sqsloop.ErrInvalidArgument) {
				t.Errorf("SetExtension(%v) = %v, want ErrInvalidArgument: outside 18s–1h", d, err)
			}
		}
		if err := sqsloop.SetExtension(ctx, 5*time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := sqsloop.SetExtension(context.Background(), 5*time.Minute); err != nil {
			t.Errorf("SetExtension without a lease = %v, want nil (nothing to do)", err)
		}
		hb := heartbeat.New()
		l.Start(hb)
		if err := l.Begin(); err != nil {
			t.Fatal(err)
		}
		hb.Beat()
		for range 3 {
			time.Sleep(4 * time.Minute)
			hb.Beat()
		}
		time.Sleep(7 * time.Second) // the look after the last beat
		if _, ok := lost.get("own"); ok {
			t.Fatal("the lease of a handler with its own 5 min extension, beating every 4 min, was lost")
		}
		exts := rec.entriesFor(opChange, "rh-own")
		if len(exts) != 4 {
			t.Fatalf("%d extensions, want 4: one per beat", len(exts))
		}
		for _, e := range exts {
			if e.timeout != 5*time.Minute {
				t.Fatalf("an extension asked for %v, want the handler's 5m", e.timeout)
			}
		}
		l.Returned()
		l.Ack()
	})
}

func TestWindowPercentile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w window
		if p, n := w.p99(); p != 0 || n != 0 {
			t.Fatalf("empty: %v, %d", p, n)
		}
		for i := 1; i <= 50; i++ {
			w.add(time.Duration(i) * time.Second)
		}
		if p, n := w.p99(); p != 50*time.Second || n != 50 {
			t.Fatalf("50 observations: p99 %v (%d), want the largest, 50s", p, n)
		}
		for i := 1; i <= 300; i++ { // the window keeps the last 256: 45–300
			w.add(time.Duration(i) * time.Second)
		}
		time.Sleep(recompute)
		if p, n := w.p99(); p != 298*time.Second || n != gapWindow {
			t.Fatalf("p99 %v (%d), want 298s over the last 256", p, n)
		}
		w.add(time.Hour) // above the percentile: counted at once
		if p, _ := w.p99(); p != 299*time.Second {
			t.Fatalf("after a larger one: p99 %v, want 299s", p)
		}
	})
}
