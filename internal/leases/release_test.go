package leases

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/heartbeat"
)

// A released lease gets no call at all, neither at once nor when Run
// flushes, is no longer extended although its handler goes on beating, and
// is no longer held; decisions after it are ignored.
func TestReleaseSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := newManager(t, rec, fastConfig)
		stop := start(t, m)
		hb := heartbeat.New()
		l := m.Hold(message("r", 3*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(1500 * time.Millisecond) // one extension at 1 s
		if n := len(rec.entriesFor(opChange, "rh-r")); n != 1 {
			t.Fatalf("%d visibility changes before the release, want 1 extension", n)
		}
		l.Release()
		l.Nack(time.Second) // ignored: the release was the decision
		for range 5 {
			hb.Beat()
			time.Sleep(time.Second)
		}
		stop()
		if n := len(rec.entriesFor(opChange, "rh-r")); n != 1 {
			t.Errorf("%d visibility changes, want only the extension before the release", n)
		}
		if n := len(rec.entriesFor(opDelete, "rh-r")); n != 0 {
			t.Errorf("%d deletes, want none", n)
		}
		if st := m.Stats(); st.Held != 0 || st.Nacked != 0 || st.Acked != 0 || st.NackFailed != 0 || st.LeasesLost != 0 {
			t.Errorf("stats %+v: want nothing held, sent or lost", st)
		}
	})
}

// A lease released while its extension is on the wire ends when the call
// comes back, with nothing sent after it.
func TestReleaseDuringAnExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := &recorder{gate: gate}
		m := running(t, rec, fastConfig)
		hb := heartbeat.New()
		l := m.Hold(message("w", 3*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(1100 * time.Millisecond)
		synctest.Wait() // the extension waits at the gate
		if n := len(rec.entriesFor(opChange, "rh-w")); n != 1 {
			t.Fatalf("%d calls on the wire, want the extension", n)
		}
		l.Release()
		close(gate)
		time.Sleep(5 * time.Second)
		if n := len(rec.entriesFor(opChange, "rh-w")); n != 1 {
			t.Errorf("%d visibility changes, want only the extension", n)
		}
		if st := m.Stats(); st.Held != 0 || st.Extensions != 1 || st.LeasesLost != 0 {
			t.Errorf("stats %+v: want the extension applied and the lease no longer held", st)
		}
	})
}
