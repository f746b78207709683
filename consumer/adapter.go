package consumer

import (
	"errors"
	"log/slog"
	"time"
)

// What a runtime that runs Handlers outside a Consumer (package sqslambda,
// on AWS Lambda) shares with the Consumer, so that a handler, its
// middleware and its failures behave the same in both.

// Wrap returns h as the Consumer runs it: inside the consumer's panic
// recovery, outermost, then mws (mws[0] outermost). A panic in h or in a
// middleware becomes an error for which IsPanic reports true, logged at
// ERROR on logger (nil: slog.Default()) with its stack. The result is safe
// for concurrent use if h and mws are. mws must not hold nil (Config.Validate
// reports one as Middleware[i]).
func Wrap(h Handler, logger *slog.Logger, mws ...Middleware) Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return chain(h, append([]Middleware{recoverPanics(logger)}, mws...)...)
}

// IsPanic reports whether err is, or wraps, a handler panic recovered by
// the consumer's panic recovery (Wrap). Stats.Panics counts those.
func IsPanic(err error) bool {
	var pe *panicError
	return errors.As(err, &pe)
}

// RetryDelay is how long a message that failed with err, at approximate
// receive count receiveCount (1 on its first delivery), stays hidden before
// its next delivery, as the Consumer decides it: the delay NackAfter put on
// err, else backoff(receiveCount); a nil backoff is Config.Backoff's
// default, ExponentialBackoff(1 s, 5 min). The lease owner clamps the
// result to 0–12 h (visibility.Lease.Nack).
func RetryDelay(err error, receiveCount int, backoff func(receiveCount int) time.Duration) time.Duration {
	var ne *nackError
	if errors.As(err, &ne) {
		return ne.delay
	}
	if backoff == nil {
		backoff = ExponentialBackoff(0, 0)
	}
	return backoff(receiveCount)
}
