package rules

import (
	"errors"
	"fmt"
	"time"
)

// NackAfter wraps err so that its message is nacked after delay instead of
// the runtime's back-off (consumer.NackAfter documents it). A nil err stays
// nil.
func NackAfter(err error, delay time.Duration) error {
	if err == nil {
		return nil
	}
	return &nackError{delay: delay, err: err}
}

// nackError carries the delay a failed message is nacked with.
type nackError struct {
	delay time.Duration
	err   error
}

func (e *nackError) Error() string { return fmt.Sprintf("%v (retry in %v)", e.err, e.delay) }
func (e *nackError) Unwrap() error { return e.err }

// RetryDelay is how long a message that failed with err, at approximate
// receive count receiveCount (1 on its first delivery), stays hidden
// before its next delivery: the delay NackAfter put on err, else
// backoff(receiveCount). backoff must not be nil. The lease owner clamps
// the result to 0–12 h.
func RetryDelay(err error, receiveCount int, backoff func(receiveCount int) time.Duration) time.Duration {
	var ne *nackError
	if errors.As(err, &ne) {
		return ne.delay
	}
	return backoff(receiveCount)
}
