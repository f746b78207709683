package consumer

import (
	"time"

	"github.com/sqsloop/sqsloop/internal/rules"
)

// Defaults of the retry back-off of failed messages: 1 s after a first
// failed receive, doubling, at most 5 min.
const (
	defaultBackoffInitial = time.Second
	defaultBackoffMax     = 5 * time.Minute
)

// ExponentialBackoff returns a back-off for Config.Backoff: how long a
// failed message stays hidden before its next delivery, given its
// approximate receive count (1 on the first delivery), doubling from
// initial on the first failure up to max: initial·2^(receiveCount-1),
// capped. Non-positive
// arguments take the defaults: initial 1 s, max 5 min (Config.Backoff's
// default is ExponentialBackoff(0, 0)).
func ExponentialBackoff(initial, max time.Duration) func(receiveCount int) time.Duration {
	if initial <= 0 {
		initial = defaultBackoffInitial
	}
	if max <= 0 {
		max = defaultBackoffMax
	}
	return func(receiveCount int) time.Duration {
		d := initial
		for i := 1; i < receiveCount && d < max; i++ {
			d *= 2
		}
		return min(d, max)
	}
}

// NackAfter wraps err so that its message is nacked with delay (clamped to
// 0–12 h, rounded up to whole seconds by SQS) instead of Config.Backoff; the
// wrapped error still matches err with errors.Is and errors.As. A nil err
// stays nil.
func NackAfter(err error, delay time.Duration) error {
	return rules.NackAfter(err, delay)
}
