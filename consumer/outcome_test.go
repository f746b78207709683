package consumer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// HandlerRun.Event decides the outcome of a run as the Consumer does, in
// its order: a lost lease first (whatever the handler returned; NeverBeat
// when the heartbeat's last beat did not move), then success, a run cut
// short, a dead-lettered message, a panic, an error; the run's retry delay
// only for the last two.
func TestHandlerRunEvent(t *testing.T) {
	m := &sqsloop.Message{ID: "m", ReceiveCount: 3}
	began, beat := time.Unix(100, 0), time.Unix(105, 0)
	boom := errors.New("boom")
	panicked := Wrap(func(context.Context, *sqsloop.Message) error { panic("boom") }, quiet)(t.Context(), m)
	run := func(r HandlerRun) sqsloop.ProcessEvent {
		r.Took, r.Beat0 = time.Second, began
		if r.LastBeat.IsZero() {
			r.LastBeat = beat
		}
		r.Delay = 3 * time.Minute
		return r.Event()
	}
	for _, c := range []struct {
		name  string
		got   sqsloop.ProcessEvent
		want  sqsloop.Outcome
		delay time.Duration
		never bool
	}{
		{"lost, beat, returned nil", run(HandlerRun{LeaseLost: true}), sqsloop.OutcomeLeaseLost, 0, false},
		{"lost, never beat, failed", run(HandlerRun{LeaseLost: true, LastBeat: began, Err: boom, CutShort: true}), sqsloop.OutcomeLeaseLost, 0, true},
		{"succeeded, cut short", run(HandlerRun{CutShort: true}), sqsloop.OutcomeAcked, 0, false},
		{"failed, cut short", run(HandlerRun{Err: boom, CutShort: true, DeadLettered: true}), sqsloop.OutcomeGivenBack, 0, false},
		{"dead-lettered", run(HandlerRun{Err: Permanent(boom), DeadLettered: true}), sqsloop.OutcomeDeadLettered, 0, false},
		{"panicked", run(HandlerRun{Err: panicked}), sqsloop.OutcomePanicked, 3 * time.Minute, false},
		{"failed", run(HandlerRun{Err: boom}), sqsloop.OutcomeNacked, 3 * time.Minute, false},
		{"not nacked", HandlerRun{Err: boom}.Event(), sqsloop.OutcomeNacked, 0, false},
	} {
		if c.got.Outcome != c.want || c.got.Delay != c.delay || c.got.NeverBeat != c.never {
			t.Errorf("%s: %v after %v (never beat %v), want %v after %v (%v)", c.name,
				c.got.Outcome, c.got.Delay, c.got.NeverBeat, c.want, c.delay, c.never)
		}
	}
	if e := run(HandlerRun{Err: boom}); !errors.Is(e.Err, boom) || e.Duration != time.Second {
		t.Errorf("event %+v: want the handler's error and duration", e)
	}
}
