package visibility

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/heartbeat"
)

// Settling: acks, nacks and give-backs, batched, in order, retried.

// A decision made while an extension of the same lease is on the wire goes
// out only after that call has returned: a lease is in at most one call at
// a time, so the ack cannot be overtaken by the extension.
func TestDecisionDuringAnExtensionWaitsForIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		rec := &recorder{gate: gate}
		m := newManager(t, rec, fastConfig)
		stop := start(t, m)
		defer stop()

		hb := heartbeat.New()
		l := m.Hold(message("d", 3*time.Second), hb, nil)
		hb.Beat()
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait() // the extension call sent at 1 s is blocked on the gate
		if n := len(rec.snapshot(opChange)); n != 1 {
			t.Fatalf("%d extension calls, want 1 on the wire", n)
		}
		l.Ack()
		time.Sleep(400 * time.Millisecond)
		if n := len(rec.snapshot(opDelete)); n != 0 {
			t.Fatalf("%d deletes while the extension was on the wire, want 0", n)
		}
		close(gate)
		time.Sleep(time.Second)
		ext := rec.entriesFor(opChange, "rh-d")
		del := rec.entriesFor(opDelete, "rh-d")
		if len(ext) != 1 || len(del) != 1 || del[0].at.Before(ext[0].back) {
			t.Fatalf("extension %+v, delete %+v: want one delete after the extension returned", ext, del)
		}
		if st := m.Stats(); st.Acked != 1 || st.Extended != 1 || st.Lost != 0 || st.Held != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}
