package consumer

import (
	"fmt"
	"time"
)

// Defaults of the retry back-off of failed messages.
const (
	// DefaultBackoffInitial is the nack delay after a first failed receive: 1 s.
	DefaultBackoffInitial = time.Second
	// DefaultBackoffMax caps the nack delay: 5 min.
	DefaultBackoffMax = 5 * time.Minute
)

// BackoffFunc returns how long a failed message stays hidden before its next
// delivery, given its approximate receive count (1 on the first delivery).
// The result is clamped to 0–12 h, rounded up to whole seconds by SQS.
type BackoffFunc func(receiveCount int) time.Duration

// ExponentialBackoff returns a BackoffFunc that doubles from initial on the
// first failure up to max: initial·2^(receiveCount-1), capped. Non-positive
// arguments take the defaults (1 s, 5 min).
func ExponentialBackoff(initial, max time.Duration) BackoffFunc {
	if initial <= 0 {
		initial = DefaultBackoffInitial
	}
	if max <= 0 {
		max = DefaultBackoffMax
	}
	return func(receiveCount int) time.Duration {
		d := initial
		for i := 1; i < receiveCount && d < max; i++ {
			d *= 2
		}
		return min(d, max)
	}
}

// NackError carries the delay a failed message is nacked with.
type NackError struct {
	// Delay is the visibility timeout the message is given back with.
	Delay time.Duration
	// Err is the handler's error.
	Err error
}

// Error implements error.
func (e *NackError) Error() string { return fmt.Sprintf("%v (retry in %v)", e.Err, e.Delay) }

// Unwrap returns the handler's error.
func (e *NackError) Unwrap() error { return e.Err }

// NackAfter wraps err so that its message is nacked with delay (clamped to
// 0–12 h, rounded up to whole seconds by SQS) instead of Config.Backoff. A
// nil err stays nil.
func NackAfter(err error, delay time.Duration) error {
	if err == nil {
		return nil
	}
	return &NackError{Delay: delay, Err: err}
}
