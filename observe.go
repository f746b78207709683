package sqsloop

import (
	"context"
	"time"
)

// Observer receives the events of the core: the receives, handler runs and
// reads of the queue's counts of a consumer (package consumer), the delete
// and visibility-change calls and lost leases of the lease owner (package
// visibility), and the phases of a drain. Instrumentation lives beside the core, not inside it: package
// otelsqsloop turns these events into OpenTelemetry spans and metrics, and
// a live page can draw them; package sqslambda reports an AWS Lambda
// batch's handler runs and lease owner through the same methods.
//
// A nil Observer costs nothing: the core checks for nil before it builds
// an event. Methods are called from the goroutines doing the work (receive
// loops, handler goroutines, the lease owner's loop and its senders),
// concurrently: an Observer must be safe for concurrent use, return
// quickly, and never block on the network. Events and the slices in them
// are valid only during the call (copy what you keep); a *Message may be
// kept until the ProcessEnd of that message, and must never be modified.
// No event carries a receipt handle that an Observer should record: read
// Message.ID, never Message.ReceiptHandle.
//
// Embed NopObserver to implement only some methods.
type Observer interface {
	// Received reports one receive call (ReceiveMessage), made with ctx.
	Received(ctx context.Context, e ReceiveEvent)

	// ProcessStart reports that a handler is about to run m, with ctx; it
	// returns the context the handler runs with (ctx, or one derived from
	// it, e.g. carrying a span). Every ProcessStart is followed by one
	// ProcessEnd of the same message, given the context returned here.
	ProcessStart(ctx context.Context, m *Message) context.Context

	// ProcessEnd reports that the handler of m returned (or was abandoned
	// at the end of a drain, or of a Lambda invocation), with the context
	// ProcessStart returned.
	ProcessEnd(ctx context.Context, m *Message, e ProcessEvent)

	// Settled reports one batch call about received messages: a
	// DeleteMessageBatch (acks) or a ChangeMessageVisibilityBatch
	// (extensions, nacks, give-backs). Called from the lease owner's sender
	// goroutines, as the call returns.
	Settled(e SettleEvent)

	// LeaseLost reports that the lease of m is lost: the message may be
	// delivered again. Called once per lost lease, from the lease owner's
	// loop.
	LeaseLost(m *Message, e LeaseLostEvent)

	// Drain reports a phase of a consumer's drain.
	Drain(e DrainEvent)

	// QueueRead reports one read of the queue's approximate counts and of
	// its dead-letter queue's, made by a consumer every
	// consumer.Config.QueueReadInterval (and at start-up) whatever its
	// receives do. Called from the consumer's reading goroutine.
	QueueRead(e QueueEvent)
}

// NopObserver is an Observer that does nothing; embed it in a struct to
// implement only the methods you need. ProcessStart returns ctx unchanged.
type NopObserver struct{}

// Received does nothing.
func (NopObserver) Received(context.Context, ReceiveEvent) {}

// ProcessStart returns ctx.
func (NopObserver) ProcessStart(ctx context.Context, _ *Message) context.Context { return ctx }

// ProcessEnd does nothing.
func (NopObserver) ProcessEnd(context.Context, *Message, ProcessEvent) {}

// Settled does nothing.
func (NopObserver) Settled(SettleEvent) {}

// LeaseLost does nothing.
func (NopObserver) LeaseLost(*Message, LeaseLostEvent) {}

// Drain does nothing.
func (NopObserver) Drain(DrainEvent) {}

// QueueRead does nothing.
func (NopObserver) QueueRead(QueueEvent) {}

// ReceiveEvent is one receive call.
type ReceiveEvent struct {
	// Start is when the call was made; Duration how long it took (a long
	// poll waits up to its WaitTime when the queue is empty).
	Start    time.Time
	Duration time.Duration
	// MaxMessages is how many messages the call asked for, 1–10.
	MaxMessages int
	// Messages are those the call returned, possibly none. The consumer
	// holds their leases from now on.
	Messages []*Message
	// Err is the call's error, nil on success.
	Err error
	// Ahead is the consumer's receive-ahead depth after this receive: how
	// many messages it may ask for beyond its free handler slots.
	Ahead int
	// Held is how many leases the lease owner holds after this receive:
	// the messages in flight (running, waiting for a handler, or being
	// settled).
	Held int
}

// QueueEvent is one read of a queue's approximate counts (and its
// dead-letter queue's), with the scaling signal computed from them (see
// package consumer). On SQS the counts are approximate and eventually
// consistent: a change shows in them within about a minute at worst, most
// often within seconds.
type QueueEvent struct {
	// Start is when the read began; Duration how long it took (the reads
	// of the queue and of its dead-letter queue, one after the other).
	Start    time.Time
	Duration time.Duration
	// Err is the error of the queue's read; then every count below is zero
	// and says nothing (the queue is not known to be empty).
	Err error
	// Backlog is the queue's visible messages (ApproximateMessages);
	// InFlight those received and not yet acked nor visible again
	// (ApproximateMessagesInFlight), by every consumer of the queue;
	// Delayed those whose delivery delay has not ended
	// (ApproximateMessagesDelayed).
	Backlog, InFlight, Delayed int
	// DeadLetters is the visible messages of the queue's dead-letter queue,
	// when DeadLettersRead reports that it was read: the queue has a
	// redrive policy and the read succeeded (a failed one is logged).
	DeadLetters     int
	DeadLettersRead bool
	// BacklogPerConsumer is Backlog shared among the queue's consumers, as
	// many as its messages in flight make (AWS's "backlog per instance").
	BacklogPerConsumer float64
	// RecommendedConsumers is how many consumers like the one reporting the
	// queue needs, at least 1 (0 only with Err): with
	// consumer.Config.LatencyTarget and a measured handler time, so that a
	// message waits at most that long before a handler starts it; until
	// then, one handler slot per message visible or in flight.
	RecommendedConsumers int
}

// How a handler run ended: ProcessEvent.Outcome, in the messaging
// semantic conventions' snake case (the label otelsqsloop reports).
const (
	// OutcomeAcked: the handler returned nil; the message is acked.
	OutcomeAcked = "acked"
	// OutcomeNacked: the handler returned an error; the message is nacked
	// after ProcessEvent.Delay.
	OutcomeNacked = "nacked"
	// OutcomePanicked: the handler panicked; the message is nacked after
	// ProcessEvent.Delay.
	OutcomePanicked = "panicked"
	// OutcomeGivenBack: the drain budget (on AWS Lambda, the invocation's
	// deadline) cancelled the handler's context and it returned an error;
	// the message is given back at once (visibility 0), not nacked.
	OutcomeGivenBack = "given_back"
	// OutcomeLeaseLost: the handler returned after its message's lease was
	// lost, so its result is late: another worker may run the message
	// again (ProcessEvent.Err is what it returned).
	OutcomeLeaseLost = "lease_lost"
	// OutcomeAbandoned: the handler still ran when the drain ended (on AWS
	// Lambda, when the invocation stopped waiting for it); its message was
	// given back (on Lambda, reported failed) and whatever it returns
	// later is ignored.
	OutcomeAbandoned = "abandoned"
	// OutcomeDeadLettered: the handler failed with an error that says the
	// message can never succeed (Permanent); a copy was sent to
	// the queue's dead-letter queue and the original is acked.
	OutcomeDeadLettered = "dead_lettered"
)

// ProcessEvent is the end of one handler run.
type ProcessEvent struct {
	// Outcome is how the run ended: OutcomeAcked, OutcomeNacked,
	// OutcomePanicked, OutcomeGivenBack, OutcomeLeaseLost,
	// OutcomeAbandoned or OutcomeDeadLettered.
	Outcome string
	// Err is the handler's error (a panic turned into one), nil when it
	// returned nil or was abandoned.
	Err error
	// Delay is the nack delay (OutcomeNacked, OutcomePanicked); 0 when
	// nothing nacks the message (on AWS Lambda without an SQS client it
	// comes back when its visibility timeout ends).
	Delay time.Duration
	// Duration is how long the handler ran (until the drain abandoned it,
	// for OutcomeAbandoned).
	Duration time.Duration
	// NeverBeat reports, for OutcomeLeaseLost, that the lease lapsed for
	// want of beats while the handler ran without beating once since it
	// started: the same answer as the LeaseLostEvent of that lease.
	NeverBeat bool
}

// The batch call a SettleEvent reports (SettleEvent.Op): the SQS
// operations, in the messaging semantic conventions' snake case.
const (
	// OpDelete is DeleteMessageBatch: acks.
	OpDelete = "delete"
	// OpChangeVisibility is ChangeMessageVisibilityBatch: extensions,
	// nacks and give-backs.
	OpChangeVisibility = "change_visibility"
)

// What one entry of a batch call does to its message (SettleEntry.Kind).
const (
	// KindExtend keeps the message hidden: its handler beats.
	KindExtend = "extend"
	// KindAck deletes the message.
	KindAck = "ack"
	// KindNack makes a failed message visible after its back-off.
	KindNack = "nack"
	// KindGiveBack makes an unstarted or drained message visible at once.
	KindGiveBack = "give_back"
)

// SettleEvent is one DeleteMessageBatch or ChangeMessageVisibilityBatch
// call of the lease owner.
type SettleEvent struct {
	// Op is the call: OpDelete or OpChangeVisibility.
	Op string
	// Start is when the call was made; Duration how long it took.
	Start    time.Time
	Duration time.Duration
	// Entries are the call's entries, 1–10, in order; valid during the call
	// only.
	Entries []SettleEntry
	// Failed is how many entries failed (Err set), whether by the call's
	// error or their own.
	Failed int
	// Err is the error of the whole call (then every entry failed with it),
	// nil when the call returned per-entry results.
	Err error
	// Held is how many leases the lease owner held when the call returned.
	Held int
	// Extension is the extension the lease owner asks for when it extends
	// a message received with the queue's visibility timeout (that of the
	// call's first entry), as of this call: its adaptive choice, or the
	// fixed visibility.Config.Extension; a handler may set its own for its
	// message (Timeout of its entries). BeatGap is the 99th percentile of
	// the gaps between beats the choice comes from (0 before any gap was
	// observed, and when the extension is fixed). See visibility.Config.
	Extension, BeatGap time.Duration
}

// SettleEntry is one entry of a batch call.
type SettleEntry struct {
	Message *Message
	// Kind is what the entry does: KindExtend, KindAck, KindNack or
	// KindGiveBack.
	Kind string
	// Timeout is the visibility timeout asked for, counted from the call
	// (OpChangeVisibility): Extension for an extension, the back-off for a
	// nack, 0 for a give-back.
	Timeout time.Duration
	// Err is the entry's error, nil on success.
	Err error
	// Left is, for an extension, how long the lease had left before its
	// deadline when the call was made; Late reports an extension made with
	// less than a quarter of visibility.Config.Interval left (half of what
	// the lease owner's last look, Interval/2 before the deadline, leaves):
	// the lease came close to lapsing although its handler beat.
	Left time.Duration
	Late bool
}

// Why a lease was lost (LeaseLostEvent.Reason).
const (
	// LostNoBeats: the handler did not beat since the previous extension
	// (or extension is disabled), and the lease lapsed.
	LostNoBeats = "no_beats"
	// LostReceiptHandleExpired: SQS said the receipt handle is stale
	// (ErrReceiptHandleExpired): the message is visible again or was
	// received by someone else.
	LostReceiptHandleExpired = "receipt_handle_expired"
	// LostCeiling: the lease reached the 12-hour ceiling SQS puts on a
	// message's visibility after its receive (ErrLeaseCeiling), or the
	// configured MaxExtension.
	LostCeiling = "ceiling"
	// LostCallFailures: the extensions (or an ack) kept failing until the
	// deadline, or failed for good.
	LostCallFailures = "call_failures"
	// LostBeforeStart: the lease had lapsed before the message's handler
	// could start, so it did not run: on AWS Lambda, a record received
	// (its ApproximateFirstReceiveTimestamp) a visibility timeout or more
	// before the invocation began (a throttled or delayed invocation, or
	// an old event replayed, such as AWS's sample events). The message is
	// visible again, or was received by someone else.
	LostBeforeStart = "lapsed_before_start"
)

// LeaseLostEvent is a lost lease.
type LeaseLostEvent struct {
	// Reason is why: LostNoBeats, LostReceiptHandleExpired, LostCeiling,
	// LostCallFailures or LostBeforeStart.
	Reason string
	// Err matches visibility.ErrLeaseLost and the reason's own error
	// (errors.Is), as the cause of the handler's context does with
	// visibility.Config.CancelOnLeaseLost.
	Err error
	// NeverBeat reports a lease lost for want of beats (LostNoBeats) while
	// its handler ran, without a beat of the heartbeat since that handler
	// started: the beats of an earlier message of its FIFO group, which
	// shares the heartbeat, do not count, and a message still waiting for
	// its handler has none that could have beaten. It is decided once per
	// lease: the ProcessEvent of the run says the same.
	NeverBeat bool
}

// The steps of a consumer's drain (DrainEvent.Phase; see package
// consumer).
const (
	// DrainBegan: receiving stopped; unstarted messages are given back.
	DrainBegan = "began"
	// DrainBudgetExhausted: the drain budget ran out; the contexts of the
	// handlers still running are cancelled.
	DrainBudgetExhausted = "budget_exhausted"
	// DrainAbandoned: handlers still ran DrainGrace later; their messages
	// are given back and they are abandoned.
	DrainAbandoned = "abandoned"
	// DrainEnded: the drain is over; Run returns.
	DrainEnded = "ended"
	// DrainInterrupted: a second signal; the leases still held are given
	// back in one last round of calls and the process exits.
	DrainInterrupted = "interrupted"
)

// DrainEvent is one phase of a drain. Counts are messages since the drain
// began, as of the phase.
type DrainEvent struct {
	// Phase is the step: DrainBegan, DrainBudgetExhausted,
	// DrainAbandoned, DrainEnded or DrainInterrupted.
	Phase string
	// Running is how many handlers were running.
	Running int
	// GivenBack counts messages given back, Finished handler runs that
	// ended, Abandoned handlers abandoned.
	GivenBack, Finished, Abandoned int
	// AcksUnsent (DrainEnded) counts acks decided but not sent when the
	// drain ended: the mailbox was slow or failing until the drain budget
	// ran out. Those messages run again.
	AcksUnsent int
	// Took is the time since the drain began (for DrainInterrupted: how
	// long the last round of give-backs took).
	Took time.Duration
	// Err is what Run returns (DrainEnded), or the error of the last round
	// of give-backs (DrainInterrupted).
	Err error
}

// Observers returns an Observer that reports every event to each of obs in
// turn (nil ones skipped): to send the events to OpenTelemetry and to a live
// page at once. ProcessStart passes the context each returns to the next,
// and ProcessEnd gives every one the last context. It returns nil when
// obs holds no Observer, and the Observer itself when it holds one.
func Observers(obs ...Observer) Observer {
	var all multiObserver
	for _, o := range obs {
		if o != nil {
			all = append(all, o)
		}
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return all
}

type multiObserver []Observer

func (m multiObserver) Received(ctx context.Context, e ReceiveEvent) {
	for _, o := range m {
		o.Received(ctx, e)
	}
}

func (m multiObserver) ProcessStart(ctx context.Context, msg *Message) context.Context {
	for _, o := range m {
		ctx = o.ProcessStart(ctx, msg)
	}
	return ctx
}

func (m multiObserver) ProcessEnd(ctx context.Context, msg *Message, e ProcessEvent) {
	for _, o := range m {
		o.ProcessEnd(ctx, msg, e)
	}
}

func (m multiObserver) Settled(e SettleEvent) {
	for _, o := range m {
		o.Settled(e)
	}
}

func (m multiObserver) LeaseLost(msg *Message, e LeaseLostEvent) {
	for _, o := range m {
		o.LeaseLost(msg, e)
	}
}

func (m multiObserver) Drain(e DrainEvent) {
	for _, o := range m {
		o.Drain(e)
	}
}

func (m multiObserver) QueueRead(e QueueEvent) {
	for _, o := range m {
		o.QueueRead(e)
	}
}
