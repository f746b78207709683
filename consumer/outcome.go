package consumer

import (
	"time"

	"github.com/sqsloop/sqsloop"
)

// HandlerRun is one run of a Handler, as a runtime that runs Handlers
// reports its end to a sqsloop.Observer (ProcessEnd): the Consumer, and
// package sqslambda on AWS Lambda, so that the same run ends with the same
// outcome in both.
type HandlerRun struct {
	// Err is what the handler returned (nil: success; a recovered panic
	// matches IsPanic); Took is how long it ran.
	Err  error
	Took time.Duration
	// LeaseLost reports that the message's lease was lost before the
	// run's result was decided (visibility.Lease.Err was not nil).
	LeaseLost bool
	// Beat0 and LastBeat are the handler's heartbeat's last beat
	// (heartbeat.Heartbeat.LastBeat) when the run began and when it
	// returned: equal on a lost lease, the handler never beat
	// (ProcessEvent.NeverBeat).
	Beat0, LastBeat time.Time
	// CutShort reports that the runtime ended the handler's context before
	// it returned: the Consumer's drain budget (cause ErrDrainTimeout), an
	// invocation's deadline on Lambda (sqslambda.ErrDeadline). A run cut
	// short that returns an error is given back at once, not nacked.
	CutShort bool
	// DeadLettered reports a failed run whose message was sent to the
	// dead-letter queue (Permanent) instead of being nacked.
	DeadLettered bool
	// Delay is the retry delay a failed run's message was nacked with
	// (RetryDelay: the delay NackAfter put on Err, else Backoff(receive
	// count)), reported as ProcessEvent.Delay of a nacked or panicked run;
	// 0 when nothing nacked it. Pass the delay used, not a second draw of
	// a jittered Backoff.
	Delay time.Duration
}

// Event returns the sqsloop.ProcessEvent that reports r's end, as the
// Consumer decides it, the first that applies:
//
//   - OutcomeLeaseLost when LeaseLost, whatever Err is; NeverBeat when
//     LastBeat equals Beat0;
//   - OutcomeAcked when Err is nil;
//   - OutcomeGivenBack when CutShort;
//   - OutcomeDeadLettered when DeadLettered;
//   - OutcomePanicked when Err is a recovered panic (IsPanic), else
//     OutcomeNacked, each with r's Delay.
//
// Err and Duration are r's Err and Took. Event never blocks.
func (r HandlerRun) Event() sqsloop.ProcessEvent {
	e := sqsloop.ProcessEvent{Err: r.Err, Duration: r.Took}
	switch {
	case r.LeaseLost:
		e.Outcome = sqsloop.OutcomeLeaseLost
		e.NeverBeat = r.LastBeat.Equal(r.Beat0)
	case r.Err == nil:
		e.Outcome = sqsloop.OutcomeAcked
	case r.CutShort:
		e.Outcome = sqsloop.OutcomeGivenBack
	case r.DeadLettered:
		e.Outcome = sqsloop.OutcomeDeadLettered
	default:
		e.Outcome = sqsloop.OutcomeNacked
		if IsPanic(r.Err) {
			e.Outcome = sqsloop.OutcomePanicked
		}
		e.Delay = r.Delay
	}
	return e
}
