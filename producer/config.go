package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Defaults of Config, and the limits of its fields.
const (
	// DefaultLinger is how long a batch waits for more messages after its
	// first: 5 ms, a fraction of an SQS round trip.
	DefaultLinger = 5 * time.Millisecond
	// MaxLinger bounds Config.Linger: 1 s.
	MaxLinger = time.Second

	// DefaultMaxPendingMessages is how many messages may be accepted and
	// not yet sent or failed before Send waits: 10,000.
	DefaultMaxPendingMessages = 10_000
	// DefaultMaxPendingBytes is how many bytes (sqsloop.OutgoingMessage.Size)
	// they may take: 64 MiB.
	DefaultMaxPendingBytes = 64 << 20

	// DefaultMaxCalls is how many SendMessageBatch calls may be on the wire
	// at once: 8 (80 messages).
	DefaultMaxCalls = 8
	// MaxMaxCalls bounds Config.MaxCalls: 1,000.
	MaxMaxCalls = 1000

	// DefaultMaxAttempts is how many times a message is tried before its
	// last transient failure is returned: 10, about 21 s of back-off.
	DefaultMaxAttempts = 10
	// MaxMaxAttempts bounds Config.MaxAttempts: 100.
	MaxMaxAttempts = 100

	// MinRetryDelay and MaxRetryDelay bound the back-off between attempts
	// of a message: 100 ms doubling to 5 s, each ±20 % at random so that
	// retries of many messages spread out.
	MinRetryDelay = 100 * time.Millisecond
	MaxRetryDelay = 5 * time.Second

	// CallTimeout bounds one SendMessageBatch call; a call that takes longer
	// is a transient failure (whose entries may have been applied).
	CallTimeout = 30 * time.Second
)

// Config tunes a Producer. The zero Config is valid: a 5 ms linger, up to
// 8 calls at once, 10,000 messages or 64 MiB pending, 10 attempts.
type Config struct {
	// Linger is how long a batch that is not full waits for more messages,
	// counted from its oldest message. While calls are on the wire it
	// waits until every one has returned and then one more Linger (the
	// senders their returns free add theirs: Nagle's rule), 10 Lingers at
	// most. A batch of 10 entries or of 1 MiB goes at once, and so do
	// messages that have waited already (a retry, a message group's next)
	// and everything during Close. 0 means DefaultLinger (5 ms); else
	// 1 ns–1 s (MaxLinger).
	Linger time.Duration

	// MaxPendingMessages is how many messages may be accepted and not yet
	// sent or failed, 1–100,000,000; then Send and Enqueue wait. 0 means
	// DefaultMaxPendingMessages (10,000).
	MaxPendingMessages int

	// MaxPendingBytes is how many bytes those may take (body and message
	// attributes, sqsloop.OutgoingMessage.Size), at least 1 MiB
	// (sqsloop.MaxMessageSize: a message of any size fits alone); a message
	// is accepted when nothing else is pending, whatever its size. 0 means
	// DefaultMaxPendingBytes (64 MiB).
	MaxPendingBytes int

	// MaxCalls is how many SendMessageBatch calls may be on the wire at
	// once, 1–1,000 (MaxMaxCalls). 0 means DefaultMaxCalls (8).
	MaxCalls int

	// MaxAttempts is how many times a message is sent before its last
	// transient failure is returned, 1–100 (MaxMaxAttempts); the context
	// given to Send or Enqueue, and Close's, may end it sooner. 0 means
	// DefaultMaxAttempts (10).
	MaxAttempts int

	// BeforeSend, if set, is called once for every message Send or Enqueue
	// accepts, in the caller's goroutine with the caller's context, before
	// the message is checked and counted: it may set message attributes
	// (m.MessageAttributes is a copy, allocated by BeforeSend when nil),
	// such as a trace context (package otelsqsloop injects traceparent).
	// What it adds counts toward SQS's limits (10 attributes, 1 MiB). It
	// must be safe for concurrent use.
	BeforeSend func(ctx context.Context, m *sqsloop.OutgoingMessage)
}

// Validate reports every problem of c (zero fields meaning their
// defaults), joined with errors.Join; each names its field and range and
// wraps sqsloop.ErrInvalidArgument. It returns nil for a valid Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("producer: Config."+format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if c.Linger < 0 || c.Linger > MaxLinger {
		bad("Linger: must be 0 (%v) or between 1ns and %v, got %v", DefaultLinger, MaxLinger, c.Linger)
	}
	if c.MaxPendingMessages < 0 || c.MaxPendingMessages > 100_000_000 {
		bad("MaxPendingMessages: must be 0 (%d) or between 1 and 100000000, got %d", DefaultMaxPendingMessages, c.MaxPendingMessages)
	}
	if c.MaxPendingBytes != 0 && c.MaxPendingBytes < sqsloop.MaxMessageSize {
		bad("MaxPendingBytes: must be 0 (%d) or at least %d (one message of the largest size), got %d",
			DefaultMaxPendingBytes, sqsloop.MaxMessageSize, c.MaxPendingBytes)
	}
	if c.MaxCalls < 0 || c.MaxCalls > MaxMaxCalls {
		bad("MaxCalls: must be 0 (%d) or between 1 and %d, got %d", DefaultMaxCalls, MaxMaxCalls, c.MaxCalls)
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > MaxMaxAttempts {
		bad("MaxAttempts: must be 0 (%d) or between 1 and %d, got %d", DefaultMaxAttempts, MaxMaxAttempts, c.MaxAttempts)
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Linger == 0 {
		c.Linger = DefaultLinger
	}
	if c.MaxPendingMessages == 0 {
		c.MaxPendingMessages = DefaultMaxPendingMessages
	}
	if c.MaxPendingBytes == 0 {
		c.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if c.MaxCalls == 0 {
		c.MaxCalls = DefaultMaxCalls
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	return c
}
