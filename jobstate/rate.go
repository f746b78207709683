package jobstate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// MaxRateWait is the longest wait a take may reserve, and the longest
// Pause: 12 h, as long as SQS keeps a message hidden. The same for every
// RateLimiter.
const MaxRateWait = sqsloop.MaxVisibilityTimeout

// Bounds of a Rate (Rate.Validate names them).
const (
	// minRateInterval is the shortest Rate.Interval: 1 µs (1,000,000 takes
	// a second); the stores keep times in microseconds.
	minRateInterval = time.Microsecond
	// maxRateInterval is the longest Rate.Interval: 24 h (one take a day).
	maxRateInterval = 24 * time.Hour
	// maxRateBurst is the largest Rate.Burst: 1,000,000.
	maxRateBurst = 1_000_000
)

// Rate is a rate limit: on average one take per Interval, and up to Burst
// at once after a quiet spell (Burst 1: evenly spaced, never two within
// one Interval). "50 a second" is Rate{Interval: time.Second / 50, Burst:
// 1}; "10 a minute per tenant, 10 at once" is Rate{Interval: 6 *
// time.Second, Burst: 10} under a key per tenant.
//
// The rule is the generic cell rate algorithm (GCRA, ITU-T I.371; the
// token bucket's equal, kept as one time per key): a key keeps its
// theoretical arrival time TAT, when its next take would be due at the
// average rate. With T = Interval and τ = (Burst−1)·T, a take at now may
// go at max(TAT, now) − τ (at once when that is not after now), and
// moves TAT to max(TAT, now) + T. A key whose TAT has passed is as good as
// absent. TakeAt and PauseAt are the rule; every RateLimiter applies it
// atomically per key, in one statement or conditional write.
type Rate struct {
	// Interval is the average time between takes: 1 µs to 24 h; stores
	// keep it to the microsecond.
	Interval time.Duration
	// Burst is how many takes may go at once after a quiet spell, 1 to
	// 1,000,000.
	Burst int
}

// Validate returns an error wrapping sqsloop.ErrInvalidArgument that names
// every field of r outside its range, or nil.
func (r Rate) Validate() error {
	var errs []error
	if r.Interval < minRateInterval || r.Interval > maxRateInterval {
		errs = append(errs, fmt.Errorf("jobstate: Rate.Interval: %v, want %v to %v: %w", r.Interval, minRateInterval, maxRateInterval, sqsloop.ErrInvalidArgument))
	}
	if r.Burst < 1 || r.Burst > maxRateBurst {
		errs = append(errs, fmt.Errorf("jobstate: Rate.Burst: %d, want 1 to %d: %w", r.Burst, maxRateBurst, sqsloop.ErrInvalidArgument))
	}
	return errors.Join(errs...)
}

// Tolerance is τ, how far ahead of the average rate a take may go:
// (Burst−1)·Interval.
func (r Rate) Tolerance() time.Duration { return time.Duration(r.Burst-1) * r.Interval }

// Grant is the answer to a take (RateLimiter.Take).
type Grant struct {
	// OK reports that the take was granted: its turn is Wait from the
	// call (0: at once), and it counts against the limit from now on,
	// whether or not the caller goes. Not OK, nothing was counted.
	OK bool
	// Wait is, for a granted take, how long until its turn; for a refused
	// one (its turn would have been further off than the take's maxWait),
	// how long until a take of the key would be granted at once, as of
	// the call (others may take that turn first).
	Wait time.Duration
}

// TakeAt is the rule of a take at now of a key whose TAT is tat (zero: the
// key is absent), reserving a turn up to maxWait ahead: it returns the
// key's TAT after the take (tat itself when refused) and the Grant.
func (r Rate) TakeAt(tat, now time.Time, maxWait time.Duration) (time.Time, Grant) {
	from := tat
	if from.Before(now) {
		from = now
	}
	wait := from.Sub(now) - r.Tolerance()
	if wait > maxWait {
		return tat, Grant{Wait: wait}
	}
	return from.Add(r.Interval), Grant{OK: true, Wait: max(wait, 0)}
}

// PauseAt is the rule of a pause (RateLimiter.Pause) of a key whose TAT is
// tat until until: its TAT becomes at least until + τ, so that no take
// goes before until; a TAT further off is kept.
func (r Rate) PauseAt(tat, until time.Time) time.Time {
	if p := until.Add(r.Tolerance()); p.After(tat) {
		return p
	}
	return tat
}

// RateLimiter keeps rate limits by key (Rate, the rule), shared by every
// process that uses the same store: Memory (one process),
// jobstate/sqlitestate, jobstate/pgstate and jobstate/dynamostore
// implement it beside Store, in tables or items of their own (a key here
// never meets a Record's). The consumer's rate limits
// (consumer.Config.RateLimits) take from it.
//
// Each method is one atomic operation on one key, one statement or
// conditional write (DynamoDB: one request while the key's state is as
// the store last saw it, two when it changed from idle to busy or back),
// safe for concurrent use by several processes. Keys are 1 to MaxKeySize
// bytes. Errors: an error wrapping sqsloop.ErrInvalidArgument for a key,
// Rate or duration out of range, before any call; ctx's; anything else is
// the store's, to be taken as transient unless it wraps
// sqsloop.ErrAccessDenied.
//
// Times are the calling process's clock, as for Records: the processes
// sharing a store need clocks that agree far better than an Interval.
type RateLimiter interface {
	// Take takes a turn of key under r, reserving one up to maxWait
	// (0 to MaxRateWait) ahead: granted, the turn counts at once and
	// Grant.Wait says when it is; refused (its turn further off than
	// maxWait), nothing counts and Grant.Wait says how far off a turn is.
	Take(ctx context.Context, key string, r Rate, maxWait time.Duration) (Grant, error)

	// Pause holds every take of key under r until until (back-pressure:
	// a downstream asked to slow down), at most MaxRateWait from now; a
	// pause that ends earlier than one standing changes nothing.
	Pause(ctx context.Context, key string, r Rate, until time.Time) error
}

// ValidateTake returns an error wrapping sqsloop.ErrInvalidArgument that
// names every argument of a Take out of range, or nil: what every
// RateLimiter checks before a call.
func ValidateTake(key string, r Rate, maxWait time.Duration) error {
	errs := []error{validKey(key), r.Validate()}
	if maxWait < 0 || maxWait > MaxRateWait {
		errs = append(errs, fmt.Errorf("jobstate: Take: maxWait %v, want 0 to %v: %w", maxWait, MaxRateWait, sqsloop.ErrInvalidArgument))
	}
	return errors.Join(errs...)
}

// ValidatePause is ValidateTake for a Pause until until, at now.
func ValidatePause(key string, r Rate, until, now time.Time) error {
	errs := []error{validKey(key), r.Validate()}
	if until.Sub(now) > MaxRateWait {
		errs = append(errs, fmt.Errorf("jobstate: Pause: until %v is more than %v ahead: %w", until.Sub(now), MaxRateWait, sqsloop.ErrInvalidArgument))
	}
	return errors.Join(errs...)
}

func validKey(key string) error {
	if len(key) == 0 || len(key) > MaxKeySize {
		return fmt.Errorf("jobstate: rate key: %d bytes, want 1-%d: %w", len(key), MaxKeySize, sqsloop.ErrInvalidArgument)
	}
	return nil
}
