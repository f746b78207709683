package rules

import (
	"time"

	"github.com/sqsloop/sqsloop"
)

// NeverBeat reports whether a lost lease counts as one whose handler never
// beat: it was lost for want of beats (lapsed: visibility.ErrLeaseLapsed)
// while its message's handler ran (running: started and not yet
// returned), and the handler's heartbeat did not beat from the handler's
// start (began: its last beat then) to the loss (last: its last beat then).
//
// Both the lease owner's LeaseLost event and the runtime's ProcessEnd event
// carry this one answer, decided once per lease when the loss is found. A
// message of a FIFO group shares its group's heartbeat: the beats of an
// earlier message's handler, and the beat of its end, are before began and
// do not count for this one; and a message still waiting behind another of
// its group, or in the receive-ahead, has no handler that could have beaten
// (running is false).
func NeverBeat(lapsed, running bool, began, last time.Time) bool {
	return lapsed && running && last.Equal(began)
}

// Run is one run of a handler, as the consumer and sqslambda report its end
// to a sqsloop.Observer (ProcessEnd), so that the same run ends with the
// same outcome in both.
type Run struct {
	// Err is what the handler returned (nil: success; a recovered panic
	// matches IsPanic); Took is how long it ran.
	Err  error
	Took time.Duration
	// LeaseLost reports that the message's lease was lost by the time the
	// handler returned, and NeverBeat that the lease owner found it lost
	// without a beat of the handler (see NeverBeat): both as the lease owner
	// answered when the handler returned.
	LeaseLost, NeverBeat bool
	// CutShort reports that the runtime ended the handler's context before
	// it returned: the consumer's drain budget, an invocation's deadline on
	// Lambda. A run cut short that returns an error is given back at once,
	// not nacked.
	CutShort bool
	// DeadLettered reports a failed run whose message was copied to the
	// dead-letter queue (sqsloop.Permanent) instead of being nacked.
	DeadLettered bool
	// Delay is the retry delay a failed run's message was nacked with
	// (RetryDelay), 0 when nothing nacked it. Pass the delay used, not a
	// second draw of a jittered back-off.
	Delay time.Duration
}

// Event returns the sqsloop.ProcessEvent that reports r's end, the first
// that applies:
//
//   - OutcomeLeaseLost when LeaseLost, whatever Err is, with NeverBeat;
//   - OutcomeAcked when Err is nil;
//   - OutcomeGivenBack when CutShort;
//   - OutcomeDeadLettered when DeadLettered;
//   - OutcomePanicked when Err is a recovered panic (IsPanic), else
//     OutcomeNacked, each with r's Delay.
//
// Err and Duration are r's Err and Took.
func (r Run) Event() sqsloop.ProcessEvent {
	e := sqsloop.ProcessEvent{Err: r.Err, Duration: r.Took}
	switch {
	case r.LeaseLost:
		e.Outcome = sqsloop.OutcomeLeaseLost
		e.NeverBeat = r.NeverBeat
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
