package rules

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Run.Event decides the outcome of a run in its order: a lost lease first
// (whatever the handler returned, with the lease owner's NeverBeat), then
// success, a run cut short, a dead-lettered message, a panic, an error; the
// run's retry delay only for the last two.
func TestRunEvent(t *testing.T) {
	m := &sqsloop.Message{ID: "m", ReceiveCount: 3}
	boom := errors.New("boom")
	panicked := Wrap(handler(func(context.Context, *sqsloop.Message) error { panic("boom") }), quiet, []middleware(nil))(t.Context(), m)
	run := func(r Run) sqsloop.ProcessEvent {
		r.Took, r.Delay = time.Second, 3*time.Minute
		return r.Event()
	}
	for _, c := range []struct {
		name  string
		got   sqsloop.ProcessEvent
		want  string
		delay time.Duration
		never bool
	}{
		{"lost, beat, returned nil", run(Run{LeaseLost: true}), sqsloop.OutcomeLeaseLost, 0, false},
		{"lost, never beat, failed", run(Run{LeaseLost: true, NeverBeat: true, Err: boom, CutShort: true}), sqsloop.OutcomeLeaseLost, 0, true},
		{"succeeded, cut short", run(Run{CutShort: true}), sqsloop.OutcomeAcked, 0, false},
		{"failed, cut short", run(Run{Err: boom, CutShort: true, DeadLettered: true}), sqsloop.OutcomeGivenBack, 0, false},
		{"dead-lettered", run(Run{Err: boom, DeadLettered: true}), sqsloop.OutcomeDeadLettered, 0, false},
		{"panicked", run(Run{Err: panicked}), sqsloop.OutcomePanicked, 3 * time.Minute, false},
		{"failed", run(Run{Err: boom}), sqsloop.OutcomeNacked, 3 * time.Minute, false},
		{"not nacked", Run{Err: boom}.Event(), sqsloop.OutcomeNacked, 0, false},
		{"never beat, but not lost", run(Run{NeverBeat: true}), sqsloop.OutcomeAcked, 0, false},
	} {
		if c.got.Outcome != c.want || c.got.Delay != c.delay || c.got.NeverBeat != c.never {
			t.Errorf("%s: %v after %v (never beat %v), want %v after %v (%v)", c.name,
				c.got.Outcome, c.got.Delay, c.got.NeverBeat, c.want, c.delay, c.never)
		}
	}
	if e := run(Run{Err: boom}); !errors.Is(e.Err, boom) || e.Duration != time.Second {
		t.Errorf("event %+v: want the handler's error and duration", e)
	}
}

// A lost lease counts as never beaten only when it lapsed for want of
// beats while its handler ran, and the heartbeat's last beat did not move
// since the handler started.
func TestNeverBeat(t *testing.T) {
	began, later := time.Unix(100, 0), time.Unix(105, 0)
	for _, c := range []struct {
		name            string
		lapsed, running bool
		began, last     time.Time
		want            bool
	}{
		{"lapsed while running, no beat ever", true, true, time.Time{}, time.Time{}, true},
		{"lapsed while running, beats only before it started (FIFO group)", true, true, began, began, true},
		{"lapsed while running, beat since", true, true, began, later, false},
		{"lapsed while waiting for its handler", true, false, time.Time{}, time.Time{}, false},
		{"lost otherwise (a stale receipt handle)", false, true, began, began, false},
	} {
		if got := NeverBeat(c.lapsed, c.running, c.began, c.last); got != c.want {
			t.Errorf("%s: NeverBeat %v, want %v", c.name, got, c.want)
		}
	}
}
