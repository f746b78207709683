package rules

import (
	"errors"
	"time"
)

// nackDelayer is what sqsloop.NackAfter's error has: the delay it put on
// the error, read through this method so that the root's error type stays
// unexported.
type nackDelayer interface{ NackDelay() time.Duration }

// RetryDelay is how long a message that failed with err, at approximate
// receive count receiveCount (1 on its first delivery), stays hidden
// before its next delivery: the delay sqsloop.NackAfter put on err, else
// backoff(receiveCount). backoff must not be nil. The lease owner clamps
// the result to 0–12 h.
func RetryDelay(err error, receiveCount int, backoff func(receiveCount int) time.Duration) time.Duration {
	var nd nackDelayer
	if errors.As(err, &nd) {
		return nd.NackDelay()
	}
	return backoff(receiveCount)
}
