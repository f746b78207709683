package visibility

import (
	"time"

	"github.com/sqsloop/sqsloop"
)

// Defaults of a Config used on its own (each field's doc gives its own). A
// consumer and sqslambda derive Interval and Extension from the visibility
// timeout instead (see Config).
const (
	// DefaultInterval is how often each lease is looked at (and at most
	// extended): 60 s.
	DefaultInterval = 60 * time.Second
	// DefaultExtension is the visibility timeout each extension asks for,
	// counted from the moment it is sent: 300 s.
	DefaultExtension = 300 * time.Second
)

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
// and Extension derived from the visibility timeout (see below); acks and
// nacks batched within 50 ms. Its problems are reported, each naming its
// field ("Visibility.Interval: …"), by the Validate of the Config that
// holds it.
//
// How it times: the lease owner looks at each lease once per Interval (the
// first time Interval after the receive), and once more Interval/2 before
// its deadline. A lease whose handler beat since its last extension is
// extended to now + Extension; one that did not beat is not, and lapses at
// its deadline. So a handler keeps its message by beating at least once per
// Interval, and one that stops beating loses it at most Interval + Extension
// after its last beat.
//
// Timing rules, for messages received with visibility timeout vt: Interval
// must be less than Extension/2 and at most vt/2, so that every lease is
// looked at, and a failed extension tried again at the next look, before it
// lapses; and MaxExtension 0 or at least vt, so that no extension shortens a
// lease. Left zero, Extension is vt and Interval a fifth of the smaller of
// the two, which keeps both rules (vt 30 s: extended by 30 s, looked at
// every 6 s, so handlers beat at least every 6 s); used on its own, with no
// visibility timeout to derive from, they are DefaultInterval and
// DefaultExtension.
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
	// counted from when it is sent. Range: 1 s–12 h (SQS's VisibilityTimeout
	// is 0–43,200 s); SQS counts whole seconds, so it is rounded up to one.
	// Default: see Config.
	Extension time.Duration

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
