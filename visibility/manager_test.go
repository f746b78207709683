package visibility

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/heartbeat"
)

// The Manager as a whole: Run's life, Hold, Failed and Err.

func TestSecondRunIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newManager(t, &recorder{}, Config{})
		stop := start(t, m)
		defer stop()
		synctest.Wait()
		if err := m.Run(t.Context()); !errors.Is(err, ErrAlreadyRunning) {
			t.Fatalf("second Run = %v, want ErrAlreadyRunning", err)
		}
	})
}

// A lease decided after its deadline passed, before the Manager's loop
// looked at it, is lost all the same: Err says so at once, and the loss is
// reported once when the loop runs.
func TestDecisionAfterTheDeadlineReportsTheLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lost lostLog
		cfg := fastConfig
		cfg.OnLeaseLost = lost.hook
		rec := &recorder{}
		m := newManager(t, rec, cfg)
		// No Run yet: nobody looks at the lease before its holder decides.
		l := m.Hold(message("d", 3*time.Second), heartbeat.New(), nil)
		time.Sleep(3 * time.Second)
		if err := l.Err(); !errors.Is(err, ErrLeaseLapsed) {
			t.Fatalf("Err = %v, want ErrLeaseLapsed", err)
		}
		l.Ack()
		stop := start(t, m)
		time.Sleep(time.Second)
		stop()
		if got, st := lost.get(), m.Stats(); len(got) != 1 || !errors.Is(got[0].Err, ErrLeaseLapsed) || st.Lost != 1 {
			t.Fatalf("reported %+v, stats %+v: want the loss reported once", got, st)
		}
		if st := m.Stats(); st.LateAcked != 1 || st.Acked != 0 || len(rec.snapshot(opDelete)) != 1 {
			t.Fatalf("stats %+v: want one late ack", st)
		}
		if err := l.Err(); !errors.Is(err, ErrLeaseLapsed) {
			t.Fatalf("Err after the late ack = %v, want still ErrLeaseLapsed", err)
		}
	})
}
