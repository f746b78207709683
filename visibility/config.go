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
// first time Interval after the receive), 2.5 Intervals before its
// deadline, and once more Interval/2 before it. A lease whose handler beat
// since its last extension is extended when its deadline nears (within
// 2.5 Intervals), to the extension after the look that saw its latest beat;
// one that did not beat is not, and lapses at its deadline. So a handler
// keeps its message by beating at least once per extension less
// Interval/2, and one that stops beating loses it at most Interval + the
// extension after its last beat. A message whose handler returns before
// its deadline nears costs no extension; one whose handler beats at every
// look costs one about every extension − 2.5 Intervals (a call that goes
// out anyway takes along the leases due within the next Interval), 10
// messages to a ChangeMessageVisibilityBatch call.
//
// The rule users rely on: with Extension left zero (the default), a
// handler that beats at least once per visibility timeout never loses its
// message, whatever else runs beside it. The lease owner chooses each
// lease's extension, never below the visibility timeout the message was
// received with plus Interval/2, longer where the gaps it observed between
// beats need it (as Cloud Pub/Sub's client sizes its ack deadline from
// the 99th percentile of the ack latencies it observed):
//
//	extension = clamp(max(vt + Interval/2, 1.25 × G + 1.5 × Interval, 1.25 × g + 1.5 × Interval), MinExtensionPeriod, MaxExtensionPeriod)
//
// where G is the 99th percentile of the gaps between beats observed on the
// queue (the last 256: the first gap of a lease is covered when its
// handler beats like the others) and g the largest gap observed of the
// lease's own handler (its later gaps are covered however few they are
// among the queue's). A beat is seen at the first look after it, up to an
// Interval late, and the last look is Interval/2 before the deadline:
// 1.5 × Interval covers both, the quarter the jitter of the slowest
// gaps. A handler that beats every 5 min on a 30 s queue loses its first
// lease if the queue has not seen such gaps before (its first gap is
// longer than the visibility timeout); the lease owner watches it, counts
// its next beat as the gap that was too long, and the next leases of the
// queue fit. The start of a handler counts as a beat, so a handler whose
// first beat comes up to a visibility timeout after its start keeps its
// lease. A handler that knows better sets its own extension, within
// MinExtensionPeriod and MaxExtensionPeriod (sqsloop.SetExtension). A
// consumer reports the choice (sqsloop.SettleEvent's Extension and
// BeatGap); set Extension to fix it.
//
// Timing rules, for messages received with visibility timeout vt: Interval
// must be less than Extension/2 (and MinExtensionPeriod more than twice
// Interval) and at most vt/2, so that every lease is looked at, and a
// failed extension tried again at the next look, before it lapses; and
// MaxExtension 0 or at least vt, so that no extension shortens a lease to
// its ceiling. Left zero, Interval is a fifth of the smaller of vt and
// Extension (vt 30 s: looked at every 6 s, extended by at least 33 s);
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
	// early to fill a batch call that goes out anyway), and how late a
	// beat may be seen. Range: > 0, less than Extension/2 and at most the
	// visibility timeout/2. Default: see Config.
	Interval time.Duration

	// Extension is how long each extension keeps the message hidden,
	// counted from the look that saw the beat that earned it. Range:
	// 1 s–12 h (SQS's VisibilityTimeout is 0–43,200 s); SQS counts whole
	// seconds, so what is asked is rounded up to one. 0 (the default):
	// chosen by the lease owner, never below the visibility timeout +
	// Interval/2 (see Config). A fixed Extension keeps the leases of
	// handlers that beat at least once per Extension − Interval/2 only.
	Extension time.Duration

	// MinExtensionPeriod and MaxExtensionPeriod bound the extension the
	// lease owner chooses (Extension 0) and the one a handler sets for its
	// message (sqsloop.SetExtension), as Cloud Pub/Sub's
	// MinExtensionPeriod and MaxExtensionPeriod do its ack deadline.
	// MinExtensionPeriod: more than 2 × Interval, at most 12 h; 0 means
	// 3 × Interval (the choice never goes below the visibility timeout
	// + Interval/2 anyway: a higher MinExtensionPeriod raises it, and a
	// handler's own may be lower). MaxExtensionPeriod:
	// MinExtensionPeriod–12 h; 0 means an hour, or the visibility timeout
	// when longer (set lower, it caps the choice below the visibility
	// timeout, and a handler beating once per visibility timeout may lose
	// its lease). The longer the extension, the later a stuck handler
	// loses its message.
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
