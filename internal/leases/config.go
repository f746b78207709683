package leases

import (
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

// ackWindow is how long a decided ack or nack may wait for others to share
// its batch call: 50 ms (a batch of 10, and a give-back, go at once).
const ackWindow = 50 * time.Millisecond

// defaultMaxExtensionPeriod is MaxExtensionPeriod's default: an hour, or
// the visibility timeout when longer (see visibility.Config).
const defaultMaxExtensionPeriod = time.Hour

// withDefaults returns c with a zero Interval set to
// visibility.DefaultInterval and a zero MinExtensionPeriod to three
// Intervals. A zero Extension stays zero: the lease owner chooses it
// (Lengths). Negative values are kept for Validate to report.
func withDefaults(c visibility.Config) visibility.Config {
	if c.Interval == 0 {
		c.Interval = visibility.DefaultInterval
	}
	if c.MinExtensionPeriod == 0 {
		c.MinExtensionPeriod = 3 * c.Interval
	}
	return c
}

// ForVisibilityTimeout returns c as it must be to keep the leases of
// messages received with visibility timeout vt, 1 s–12 h (SQS's
// VisibilityTimeout, whole seconds): a zero Interval becomes a fifth of
// the smaller of vt and Extension (vt 30 s: looked at every 6 s). A zero
// Extension stays zero: the lease owner chooses it (see Lengths), starting
// from vt. This is how a consumer derives its lease owner's Config from
// its VisibilityTimeout (or its queue's), and sqslambda from the queue's.
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
func ForVisibilityTimeout(c visibility.Config, vt time.Duration) (visibility.Config, error) {
	if c.Interval == 0 {
		c.Interval = vt / 5
		if c.Extension > 0 {
			c.Interval = min(vt, c.Extension) / 5
		}
	}
	var errs []error
	if vt < time.Second || vt > sqsloop.MaxVisibilityTimeout {
		errs = append(errs, invalid("the visibility timeout: must be between 1s and 12h (SQS VisibilityTimeout, 1–43200 s to extend), got %v", vt))
	}
	if p := problems(c); len(p) > 0 {
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
func ceiling(c visibility.Config) time.Duration {
	if c.MaxExtension > 0 {
		return c.MaxExtension
	}
	return sqsloop.MaxVisibilityTimeout
}

// Validate reports every problem with c (zero fields taking their defaults),
// joined with errors.Join; each names its field and the allowed range and
// wraps sqsloop.ErrInvalidArgument (errors.Is). It returns nil for a valid
// Config; a disabled Config always is. The Config that holds c (consumer's,
// sqslambda's) prefixes each problem with "Visibility.".
func Validate(c visibility.Config) error {
	return errors.Join(problems(c)...)
}

// ValidateAnyTimeout is Validate for a Config whose visibility timeout is
// not known yet (sqslambda's before its first invocation, a consumer's that
// reads its queue's at start-up): a zero Interval, which that timeout will
// give, is not held against the other fields. ForVisibilityTimeout checks
// the rest once the timeout is known.
func ValidateAnyTimeout(c visibility.Config) error {
	if c.Interval == 0 {
		c.Interval = time.Nanosecond // the least it can be: no rule against another field fails on it
	}
	return Validate(c)
}

// problems lists what Validate reports, one error per problem.
func problems(c visibility.Config) []error {
	d := withDefaults(c)
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, invalid(format, args...))
	}
	if c.Disabled {
		return nil
	}
	if d.Extension != 0 && (d.Extension < time.Second || d.Extension > sqsloop.MaxVisibilityTimeout) {
		bad("Extension: must be 0 (chosen by the lease owner) or between 1s and 12h (SQS VisibilityTimeout 0–43200 s), got %v", d.Extension)
	}
	if d.Interval <= 0 {
		bad("Interval: must be > 0, got %v", d.Interval)
	} else if d.Extension > 0 && d.Interval >= d.Extension/2 {
		bad("Interval: must be less than Extension/2 (%v), got %v", d.Extension/2, d.Interval)
	}
	if lo := d.MinExtensionPeriod; d.Interval > 0 && (lo <= 2*d.Interval || lo > sqsloop.MaxVisibilityTimeout) {
		bad("MinExtensionPeriod: must be 0 (3 Intervals, %v) or more than 2 Intervals (%v) and at most 12h, got %v", 3*d.Interval, 2*d.Interval, lo)
	}
	if hi := d.MaxExtensionPeriod; hi != 0 && (hi < d.MinExtensionPeriod || hi > sqsloop.MaxVisibilityTimeout) {
		bad("MaxExtensionPeriod: must be 0 (an hour, or the visibility timeout if longer) or between MinExtensionPeriod (%v) and 12h, got %v", d.MinExtensionPeriod, hi)
	}
	if d.MaxExtension < 0 || d.MaxExtension > sqsloop.MaxVisibilityTimeout {
		bad("MaxExtension: must be between 0 and 12h (the SQS ceiling), got %v", d.MaxExtension)
	}
	if d.FixedInterval && d.MaxExtension == 0 {
		bad("MaxExtension: required with FixedInterval, so a stuck handler cannot hold its message for 12h")
	}
	return errs
}

// invalid returns a problem with a field: format names it, and the error
// wraps sqsloop.ErrInvalidArgument.
func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, sqsloop.ErrInvalidArgument)...)
}
