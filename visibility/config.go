package visibility

import (
	"time"

	"github.com/sqsloop/sqsloop"
)

// DefaultInterval is the Interval of a Config used on its own, with no
// visibility timeout to derive it from: 60 s. A consumer and sqslambda
// derive Interval from the visibility timeout instead (see Config).
const DefaultInterval = 60 * time.Second

// MaxAccessDenied is how many consecutive calls of one kind (receives,
// deletes, visibility changes) may fail with sqsloop.ErrAccessDenied
// before the consumer or the lease owner gives up for good: 5, enough to
// ride over an IAM change that is still propagating, few enough that a
// missing permission ends the process's work within seconds instead of
// retrying forever.
const MaxAccessDenied = 5

// Config tunes the lease owner of a consumer (consumer.Config.Visibility)
// or of sqslambda's invocations (sqslambda.Config.Visibility). The zero
// Config is valid and means: extension enabled, heartbeat-gated, Interval
// derived from the visibility timeout, Extension chosen by the lease owner
// from the beats it observes (see below); acks and nacks batched within
// 50 ms. Its problems are reported, each naming its field
// ("Visibility.Interval: …"), by the Validate of the Config that holds it.
//
// How it times: the lease owner looks at each lease once per Interval (the
// first time Interval after the receive), and once more Interval/2 before
// its deadline. A lease whose handler beat since its last extension is
// extended to now + the extension; one that did not beat is not, and
// lapses at its deadline. So a handler keeps its message by beating often
// enough for the extension, and one that stops beating loses it at most
// Interval + the extension after its last beat. The calls do not depend on
// the extension: one per look that finds a new beat, so at most 3600 s /
// Interval per message-hour, 10 messages to a ChangeMessageVisibilityBatch
// call.
//
// Adaptive extension (Extension left zero): the lease owner chooses the
// extension as Cloud Pub/Sub's client chooses its ack deadline, from the
// 99th percentile G of the gaps between beats it observed on the queue
// (the last 256), with a margin, within bounds:
//
//	extension = clamp(1.25 × G + 1.5 × Interval, MinExtensionPeriod, MaxExtensionPeriod)
//
// A beat is seen at the first look after it, up to an Interval late, and
// the last look is Interval/2 before the deadline: 1.5 × Interval covers
// both, the quarter of G the jitter of the slowest gaps. A handler that
// beats at every look gets MinExtensionPeriod (three Intervals: a stuck one
// loses its lease within four Intervals of its last beat, where a fixed
// Extension of the visibility timeout takes up to six); one that beats
// every 5 min gets about 6 min, and keeps its lease. Until 16 gaps are
// observed, over a visibility timeout at least, the extension is not
// shorter than the visibility timeout the message was received with (the
// fixed choice), only longer, at once, when a gap says so; a lease that
// lapses while its handler still runs is watched, and its handler's next
// beat counts as the gap that was too long, so a first guess too short
// corrects itself after one lapse. The run times of the handlers are kept
// too: while a handler is expected to return (the 99th percentile of the
// run times) 2.5 Intervals or more before its lease's deadline, its lease
// is not extended, so jobs shorter than the visibility timeout cost no
// extension; after that time its lease is extended to no later than an
// extension at the look that saw its last beat would have, so a stuck
// handler loses its message no later for the wait. A handler that knows
// better sets its own extension, within the same bounds
// (sqsloop.SetExtension). A consumer reports the choice
// (sqsloop.SettleEvent's Extension and BeatGap); set Extension to fix it.
//
// Timing rules, for messages received with visibility timeout vt: Interval
// must be less than Extension/2 (and MinExtensionPeriod more than twice
// Interval) and at most vt/2, so that every lease is looked at, and a
// failed extension tried again at the next look, before it lapses; and
// MaxExtension 0 or at least vt, so that no extension shortens a lease to
// its ceiling. Left zero, Interval is a fifth of the smaller of vt and
// Extension (vt 30 s: looked at every 6 s, extended by at least 18 s);
// used on its own, with no visibility timeout to derive from, it is
// DefaultInterval.
type Config struct {
	// Disabled turns lease extension off: messages stay hidden for the
	// receive's visibility timeout only. Acks, nacks and give-backs are
	// sent all the same. (Spelled Disabled, not Enabled, so that the zero
	// Config means the default.)
	Disabled bool

	// FixedInterval extends every lease when due, beats or not, until
	// MaxExtension after the receive: for handlers that cannot beat; a
	// stuck handler keeps its message until MaxExtension. False (the
	// default) is heartbeat-gated: a lease is extended only if its handler
	// has beaten since the previous extension, so a stuck handler loses its
	// message.
	FixedInterval bool

	// Interval is how often each lease is looked at, and so the least time
	// between two extensions of one message (a lease may be taken along
	// early to fill a batch call that goes out anyway). Range: > 0, less
	// than Extension/2 and at most the visibility timeout/2. Default: see
	// Config.
	Interval time.Duration

	// Extension is the visibility timeout requested by each extension,
	// counted from when it is sent. Range: 1 s–12 h (SQS's
	// VisibilityTimeout is 0–43,200 s); SQS counts whole seconds, so it is
	// rounded up to one. 0 (the default): chosen by the lease owner from
	// the beats it observes, starting from the visibility timeout (see
	// Config).
	Extension time.Duration

	// MinExtensionPeriod and MaxExtensionPeriod bound the extension the
	// lease owner chooses (Extension 0) and the one a handler sets for its
	// message (sqsloop.SetExtension), as Cloud Pub/Sub's
	// MinExtensionPeriod and MaxExtensionPeriod do its ack deadline.
	// MinExtensionPeriod: more than 2 × Interval, at most 12 h; 0 means
	// 3 × Interval. MaxExtensionPeriod: MinExtensionPeriod–12 h; 0 means
	// an hour, or the visibility timeout when longer. The longer the
	// extension, the later a stuck handler loses its message.
	MinExtensionPeriod, MaxExtensionPeriod time.Duration

	// MaxExtension bounds how long a message may stay hidden in total,
	// counted from the receive. Range 0–12 h, and 0 or at least the
	// visibility timeout; 0 means the 12-hour ceiling SQS imposes. Required
	// (non-zero) with FixedInterval, so a stuck handler cannot hold a
	// message forever.
	MaxExtension time.Duration

	// CancelOnLeaseLost cancels the handler's context when its lease is
	// lost, with a cause that matches ErrLeaseLost and the reason
	// (errors.Is). Default false: the handler carries on, and its ack will
	// likely fail.
	CancelOnLeaseLost bool

	// OnLeaseLost, if set, is called once for each lost lease with its
	// message (read it, do not keep it) and an error matching ErrLeaseLost
	// and the reason (see ErrLeaseLost), from the lease owner's goroutine:
	// keep it quick and never block on the network.
	OnLeaseLost func(m *sqsloop.Message, err error)

	// Observer, if set, receives an event for every batch call
	// (sqsloop.Observer.Settled) and every lost lease (LeaseLost), from the
	// lease owner's goroutines. Nil (the default) costs nothing. A consumer
	// and sqslambda set it from their own Config.Observer when it is nil.
	Observer sqsloop.Observer
}
