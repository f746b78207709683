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

// A handler that beats every second keeps its lease, extended to E = VT +
// Interval/2 = 33 s after the stamp of its latest beat, only when its
// deadline is within 2.5 Intervals (15 s): one extension about every 18 s
// (a beat at every look would earn one every 6 s: 3× the calls), and it
// loses its lease within E + Interval (33–39 s) of its last beat.
func TestAFastBeaterIsExtendedAsItsDeadlineNears(t *testing.T) {
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
		if len(exts) < 15 || len(exts) > 18 {
			t.Errorf("%d extensions in 5 min, want about 17 (one every 18 s)", len(exts))
		}
		for _, e := range exts {
			if e.timeout > 33*time.Second {
				t.Fatalf("an extension asked for %v, want ≤ 33s (VT + Interval/2 after the latest beat)", e.timeout)
			}
		}
		if ext, gap := m.Lengths().Choice(30 * time.Second); ext != 33*time.Second || gap != 6*time.Second {
			t.Errorf("Choice = %v, %v; want 33s (the floor) and gaps of 6s (a beat seen at every look)", ext, gap)
		}
		close(stop)
		lastBeat := time.Now() // beats stop now (to the second)
		time.Sleep(time.Minute)
		at, ok := lost.get("fast")
		if !ok {
			t.Fatal("the lease of a handler that stopped beating was not lost")
		}
		if d := at.Sub(lastBeat); d > 39*time.Second || d < 27*time.Second {
			t.Errorf("lease lost %v after the last beat, want within E + Interval (39s)", d)
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
			if e.timeout > ext.Truncate(time.Second)+time.Second {
				t.Fatalf("an extension asked for %v, want at most %v (the extension after the latest beat)", e.timeout, ext)
			}
		}
	})
}

// Gaps seen within the first seconds say nothing of longer ones not over
// yet: 20 handlers that beat at their start and then every 30 s give 20
// gaps of 6 s (their start to that first beat, seen at the first look)
// before any 30 s gap can end. The extension never goes below the
// visibility timeout, and no lease lapses.
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

// A lease is extended only when its deadline nears (2.5 Intervals, 15 s,
// before it): jobs of 10 s on leases of 30 s cost no extension, from the
// first.
func TestShortJobsNeedNoExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := running(t, rec, adaptive(t, nil))
		for i := range 20 {
			id := string(rune('a' + i))
			job(m, message(id, 30*time.Second), time.Second, 10*time.Second, nil)
			if n := len(rec.entriesFor(opChange, "rh-"+id)); n != 0 {
				t.Errorf("job %d, done 20 s before its deadline: %d extensions, want 0", i, n)
			}
		}
	})
}

// A job longer than the others is extended all the same: what decides is
// its deadline, not what other jobs took.
func TestAJobLongerThanTheOthersIsExtended(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lapses
		m := running(t, rec, adaptive(t, lost.hook))
		for range 16 {
			job(m, message("short", 30*time.Second), time.Second, 10*time.Second, nil)
		}
		job(m, message("long", 30*time.Second), time.Second, 2*time.Minute, nil)
		if _, ok := lost.get("long"); ok {
			t.Fatal("the lease of a job longer than the others was lost")
		}
		if n := len(rec.entriesFor(opChange, "rh-long")); n < 5 {
			t.Fatalf("%d extensions over 2 min, want one about every 18 s", n)
		}
	})
}

// An extension sent when the deadline nears counts from the look that saw
// the handler's latest beat, not from when it is sent: a stuck handler
// loses its message as soon as with an extension at every look. Here
// leases of 30 s are extended to 33 s after the latest beat, looked at
// every 6 s: a handler that beats until 5.5 s in and then hangs (its last
// beat seen at the look 6 s in) must lose its lease 39 s after its receive
// (6 s + 33 s), though the extension went out 15 s in.
func TestADeferredExtensionCountsFromTheLastBeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var lost lapses
		m := running(t, rec, adaptive(t, lost.hook))
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
		if d := at.Sub(received); d > 39*time.Second {
			t.Errorf("lease lost %v after the receive, want ≤ 39s (the look that saw the last beat, 6 s in, + 33 s)", d)
		}
		if exts := rec.entriesFor(opChange, "rh-stuck"); len(exts) != 1 || exts[0].timeout != 24*time.Second {
			t.Errorf("extensions %v, want one, of 24s (sent 15 s in, to 39 s)", exts)
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
		for _, e := range rec.entriesFor(opChange, "rh-own") {
			if e.timeout > 5*time.Minute || e.timeout < time.Minute {
				t.Fatalf("an extension asked for %v, want up to the handler's 5m after its latest beat", e.timeout)
			}
		}
		time.Sleep(5*time.Minute - 14*time.Second) // 5 min after the look that saw the last beat, less an Interval
		if _, ok := lost.get("own"); ok {
			t.Fatal("the lease was lost within 5 min of the handler's last beat")
		}
		time.Sleep(20 * time.Second)
		if _, ok := lost.get("own"); !ok {
			t.Fatal("the lease was kept more than 5 min + an Interval after the handler's last beat")
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
