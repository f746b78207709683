package visibility

import (
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Defaults for Config (each field's doc gives its own). A zero field
// means its default.
const (
	// defaultInterval is how often each lease is looked at (and at most
	// extended): 60 s.
	defaultInterval = 60 * time.Second
	// defaultExtension is the visibility timeout each extension asks for,
	// counted from the moment it is sent: 300 s.
	defaultExtension = 300 * time.Second
)

// ackWindow is how long a decided ack or nack may wait for others to share
// its batch call: 50 ms (a batch of 10, and a give-back, go at once).
const ackWindow = 50 * time.Millisecond

// Policy decides whether a due lease is extended.
type Policy int

const (
	// HeartbeatGated (the default) extends a lease only if its handler has
	// beaten since the previous extension. A stuck handler loses its message.
	HeartbeatGated Policy = iota
	// FixedInterval extends every lease when due, beats or not, until
	// Config.MaxExtension after the receive. For handlers that cannot beat;
	// a stuck handler keeps its message until MaxExtension.
	FixedInterval
)

// Config tunes a Manager. The zero Config is valid and means: extension
// enabled, heartbeat-gated, every 60 s at most, 300 s each time; acks and
// nacks batched within 50 ms.
//
// How it times: the Manager looks at each lease once per Interval (the
// first time Interval after the receive), and once more Interval/2 before
// its deadline. A lease whose handler beat since its last extension is
// extended to now + Extension; one that did not beat is not, and lapses at
// its deadline. So a handler keeps its message by beating at least once per
// Interval, and one that stops beating loses it at most Interval + Extension
// after its last beat.
//
// Timing rule: Interval must be less than Extension/2, and less than half of
// the visibility timeout messages are received with (the consumer checks
// that), so that every lease is looked at, and a failed extension tried
// again at the next look, before it lapses.
type Config struct {
	// Disabled turns lease extension off: messages stay hidden for the
	// receive's visibility timeout only. Acks, nacks and give-backs are
	// sent all the same. (Spelled Disabled, not Enabled, so that the zero
	// Config means the default.)
	Disabled bool

	// Policy is HeartbeatGated (default) or FixedInterval.
	Policy Policy

	// Interval is how often each lease is looked at, and so the least time
	// between two extensions of one message (a lease may be taken along
	// early to fill a batch call that goes out anyway). Range: > 0 and less
	// than Extension/2. Default 60 s.
	Interval time.Duration

	// Extension is the visibility timeout requested by each extension,
	// counted from when it is sent. Range: 1 s–12 h (SQS's VisibilityTimeout
	// is 0–43,200 s); SQS counts whole seconds, so it is rounded up to one.
	// Default 300 s.
	Extension time.Duration

	// MaxExtension bounds how long a message may stay hidden in total,
	// counted from the receive. Range 0–12 h; 0 means the 12-hour ceiling SQS
	// imposes. Required (non-zero) with FixedInterval, so a stuck handler
	// cannot hold a message forever.
	MaxExtension time.Duration

	// CancelOnLeaseLost cancels the handler's context (the cancel function
	// given to Hold) when its lease is lost, with a cause that matches
	// ErrLeaseLost and the reason (errors.Is). Default false: the handler
	// carries on, and its ack will likely fail.
	CancelOnLeaseLost bool

	// OnLeaseLost, if set, is called once for each lost lease with its
	// message (read it, do not keep it) and an error matching ErrLeaseLost
	// and the reason (see ErrLeaseLost), from the Manager's goroutine: keep
	// it quick and never block on the network.
	OnLeaseLost func(m *sqsloop.Message, err error)

	// Observer, if set, receives an event for every batch call
	// (sqsloop.Observer.Settled) and every lost lease (LeaseLost), from the
	// Manager's goroutines. Nil (the default) costs nothing. A consumer
	// sets it from its own Config.Observer.
	Observer sqsloop.Observer
}

// withDefaults returns c with every zero field set to its default. Negative
// values are kept for Validate to report.
func (c Config) withDefaults() Config {
	if c.Interval == 0 {
		c.Interval = defaultInterval
	}
	if c.Extension == 0 {
		c.Extension = defaultExtension
	}
	return c
}

// ForVisibilityTimeout returns c as it must be to keep the leases of
// messages received with visibility timeout vt, 1 s–12 h (SQS's
// VisibilityTimeout, whole seconds): a zero Extension becomes vt, and a
// zero Interval a fifth of the smaller of vt and Extension (vt 30 s:
// extended by 30 s, looked at every 6 s). This is how a consumer derives
// its lease owner's Config from its VisibilityTimeout, and sqslambda from
// the queue's.
//
// Besides the problems of Validate, it reports those only vt shows
// (unless c is Disabled): an Interval above vt/2, which leaves too little
// time after the first look (Interval after the receive) to extend
// before the lease lapses, and a MaxExtension between 0 and vt, with which
// the first extension would ask only for the time left to that ceiling
// and so end the lease before the receive's own visibility timeout would.
// Each problem names its field and its allowed range and wraps
// sqsloop.ErrInvalidArgument (errors.Is); several are joined with
// errors.Join. It returns the derived Config in every case, and nil for a
// valid one.
func (c Config) ForVisibilityTimeout(vt time.Duration) (Config, error) {
	if c.Extension == 0 {
		c.Extension = vt
	}
	if c.Interval == 0 {
		c.Interval = min(vt, c.Extension) / 5
	}
	var errs []error
	if vt < time.Second || vt > sqsloop.MaxVisibilityTimeout {
		errs = append(errs, invalid("the visibility timeout: must be between 1s and 12h (SQS VisibilityTimeout, 1–43200 s to extend), got %v", vt))
	}
	if p := c.problems(); len(p) > 0 {
		errs = append(errs, p...)
	} else if !c.Disabled {
		if c.Interval > vt/2 {
			errs = append(errs, invalid("Interval: must be at most the visibility timeout/2 (%v), got %v", vt/2, c.Interval))
		}
		if m := c.MaxExtension; m > 0 && m < vt {
			errs = append(errs, invalid("MaxExtension: must be 0 or at least the visibility timeout (%v), got %v", vt, m))
		}
	}
	return c, errors.Join(errs...)
}

// ceiling is the total time a message may stay hidden after its receive.
func (c Config) ceiling() time.Duration {
	if c.MaxExtension > 0 {
		return c.MaxExtension
	}
	return sqsloop.MaxVisibilityTimeout
}

// Validate reports every problem with c (zero fields taking their defaults),
// joined with errors.Join; each names its field and the allowed range and
// wraps sqsloop.ErrInvalidArgument (errors.Is). It returns nil for a valid
// Config; a disabled Config always is.
func (c Config) Validate() error {
	return errors.Join(c.problems()...)
}

// problems lists what Validate reports, one error per problem.
func (c Config) problems() []error {
	d := c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, invalid(format, args...))
	}
	if c.Disabled {
		return nil
	}
	if d.Policy != HeartbeatGated && d.Policy != FixedInterval {
		bad("Policy: must be HeartbeatGated or FixedInterval, got %d", int(d.Policy))
	}
	if d.Extension < time.Second || d.Extension > sqsloop.MaxVisibilityTimeout {
		bad("Extension: must be between 1s and 12h (SQS VisibilityTimeout 0–43200 s), got %v", d.Extension)
	}
	if d.Interval <= 0 {
		bad("Interval: must be > 0, got %v", d.Interval)
	} else if d.Interval >= d.Extension/2 {
		bad("Interval: must be less than Extension/2 (%v), got %v", d.Extension/2, d.Interval)
	}
	if d.MaxExtension < 0 || d.MaxExtension > sqsloop.MaxVisibilityTimeout {
		bad("MaxExtension: must be between 0 and 12h (the SQS ceiling), got %v", d.MaxExtension)
	}
	if d.Policy == FixedInterval && d.MaxExtension == 0 {
		bad("MaxExtension: required with the FixedInterval policy, so a stuck handler cannot hold its message for 12h")
	}
	return errs
}

// invalid returns a problem with a field: format names it, and the error
// wraps sqsloop.ErrInvalidArgument.
func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, sqsloop.ErrInvalidArgument)...)
}
