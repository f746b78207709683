package consumer

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/visibility"
)

// Defaults and limits of Config that programs built on a Consumer name
// (the sqsloop command's flags take them from here).
const (
	// DefaultShutdownTimeout is Config.ShutdownTimeout's default, the
	// drain budget: 25 s, inside the 30 s that ECS and Kubernetes give a
	// task between SIGTERM and SIGKILL (Run returns within it and 1.5 s).
	DefaultShutdownTimeout = 25 * time.Second
	// MaxConcurrency bounds Config.Concurrency: 100,000.
	MaxConcurrency = 100_000
)

// Defaults for Config (each field's doc gives its own). A zero field
// means its default.
const (
	// defaultConcurrency is how many handlers run at once: 10.
	defaultConcurrency = 10
	// defaultVisibilityTimeout hides each received message for 5 min when
	// the queue's own cannot be read at start-up; the lease owner keeps it
	// hidden while its handler beats.
	defaultVisibilityTimeout = 5 * time.Minute
	// defaultWaitTime is the long poll of each receive: 20 s, the SQS maximum.
	defaultWaitTime = sqsloop.MaxWaitTime
	// defaultQueueReadInterval is how often a consumer with an Observer
	// reads its queue's counts and its dead-letter queue's: 5 s, 720
	// GetQueueAttributes calls an hour per queue.
	defaultQueueReadInterval = 5 * time.Second
)

// Config tunes a Consumer. The zero Config is valid: 10 handlers, receives of
// up to 10 messages long-polling 20 s, the queue's visibility timeout
// (read at start-up; 5 min when it cannot be), looked at every fifth of it
// and extended while handlers beat by an extension the lease owner chooses
// from the beats it sees (see visibility.Config), exponential retry
// back-off from 1 s to 5 min, and a 25 s drain.
//
// Timing rules: Visibility.Interval < Visibility.Extension/2 and
// Visibility.Interval ≤ VisibilityTimeout/2, so every lease gets its first
// extension with time to spare, and Visibility.MaxExtension 0 or at least
// VisibilityTimeout, so that no extension shortens a lease (see
// visibility.Config). Left zero, Visibility.Interval is a fifth of the
// smaller of VisibilityTimeout and Visibility.Extension, which keeps both
// rules (VisibilityTimeout 30 s: looked at every 6 s). With VisibilityTimeout
// left zero, the rules that involve it are checked at start-up, when it is
// known: Run then returns their errors.
// ShutdownTimeout should end before the platform kills the process (ECS and
// Kubernetes: 30 s after SIGTERM by default). With extension disabled, a
// handler running past VisibilityTimeout loses its message, draining or not.
type Config struct {
	// Concurrency is how many handlers run at once, 1–MaxConcurrency
	// (100,000). Default 10.
	// The consumer asks for messages for its free handler slots plus a
	// receive-ahead sized from the measured handler time and receive round
	// trip (see the package doc), at most 20 more per slot and 320 in all
	// (32 receives of 10 on the wire at once), and none while handlers are
	// slow next to a round trip.
	Concurrency int

	// VisibilityTimeout hides each received message this long, 1 s–12 h
	// (SQS counts whole seconds). 0 (the default): the queue's own, read
	// by Run at start-up from a Mailbox that is an sqsloop.AttributesReader
	// (sqsmailbox, memmailbox and sqlmailbox are), so that it is set in one
	// place, the queue; 5 min when the Mailbox cannot say (not an
	// AttributesReader, or the read failed: a WARN says so).
	VisibilityTimeout time.Duration

	// WaitTime is the long poll of each receive, 1–20 s (WaitTimeSeconds).
	// Default 20 s.
	WaitTime time.Duration

	// MessageAttributeNames chooses the message attributes each receive
	// asks for (see sqsloop.ReceiveRequest.MessageAttributeNames): nil, the
	// default, means all of them; an empty, non-nil slice none (less for
	// SQS to send and for the SDK to decode); or those named ("order.*" for
	// a prefix).
	MessageAttributeNames []string

	// Visibility tunes the lease owner (extension, the lease-lost hook);
	// see visibility.Config. Left zero, Interval follows VisibilityTimeout
	// (see Config) and the lease owner chooses the extension.
	Visibility visibility.Config

	// LatencyTarget is how long a message should wait in the queue, at
	// most, before a handler starts it: the number of consumers the queue
	// needs (sqsloop.QueueEvent's RecommendedConsumers, the scaling signal
	// of the package doc) follows it and the measured handler time. 0 (the
	// default): none; the recommendation is then a handler slot per message
	// visible or in flight. Must be ≥ 0.
	LatencyTarget time.Duration

	// QueueReadInterval is how often a consumer with an Observer reads its
	// queue's approximate counts (visible, in flight, delayed) and its
	// dead-letter queue's visible messages, for the live signals
	// (sqsloop.QueueEvent: the backlog, the dead-letter queue's depth, the
	// scaling signal), whatever its receives do: one GetQueueAttributes
	// call per queue per interval, and one at start-up. 1 s–1 h; default
	// 5 s, so the signals are at most 5 s and a round trip behind the
	// counts SQS reports (which may lag by up to a minute themselves), for
	// 720 calls an hour per queue per consumer, 1,440 with a dead-letter
	// queue (SQS bills them as requests). No reads without an Observer, nor
	// when the Mailbox is no sqsloop.AttributesReader.
	QueueReadInterval time.Duration

	// Backoff gives a failed message's nack delay from its approximate
	// receive count (1 on the first delivery), for an error or a panic
	// alike, unless the error carries its own delay (sqsloop.NackAfter). The result
	// is clamped to 0–12 h and rounded up to whole seconds by SQS. It is
	// called from handler goroutines, concurrently. Default
	// sqsloop.ExponentialBackoff(1 s, 5 min).
	Backoff func(receiveCount int) time.Duration

	// ShutdownTimeout is the drain budget: how long in-flight handlers may
	// run after shutdown begins before their contexts are cancelled. After
	// it, handlers get DrainGrace to return; then what they still hold is
	// given back. What the handlers decided (acks, nacks, give-backs) is
	// sent within what is left of the budget, at least 1 s, failed calls
	// tried again meanwhile; then Run returns. > 0; 0 means the deadline
	// of Shutdown's context when it has one (a lifecycle.LoopGroup with a
	// GracePeriod gives each loop its share that way, so the platform's
	// grace is set in one place), else DefaultShutdownTimeout (25 s). A
	// deadline on Shutdown's context also cuts a longer ShutdownTimeout
	// short.
	ShutdownTimeout time.Duration

	// ExitWhenIdle, when > 0, makes Run return nil on its own once its
	// receives for that long came back empty or still wait (no error) while
	// nothing was in flight (no handler running, no message held): for
	// batch jobs (a Kubernetes CronJob, an ECS task per backlog, a CI step)
	// that drain a queue and exit. The count is watched on its own clock:
	// when it reaches ExitWhenIdle the drain begins and cuts the long poll
	// in flight short (see Shutdown), so Run returns within ExitWhenIdle
	// and a round trip (at most 250 ms) of the last busy moment, whatever
	// WaitTime is; a receive that fails starts the count again (a mailbox
	// that does not answer is not an empty queue), and so does a pause. A
	// long poll returns as soon as a message is visible, so one that came
	// back empty, or still waits, is the consumer's own evidence of an
	// empty queue; the queue's approximate counts are not consulted: SQS
	// updates them about a minute late, and they include messages other
	// consumers hold and messages waiting out a nack's back-off or a delay,
	// which this run would then wait for. Those are left to the next run. 0
	// (the default) never exits; must be ≥ 0.
	ExitWhenIdle time.Duration

	// Middleware wraps the handler, Middleware[0] outermost, inside the
	// consumer's own panic recovery.
	Middleware []sqsloop.Middleware

	// Logger receives the consumer's records and the lease owner's
	// (message IDs only; receipt handles are never logged). Default
	// slog.Default().
	Logger *slog.Logger

	// Observer, if set, receives the consumer's events (receives, handler
	// runs, drain phases, the reads of the queue's counts every
	// QueueReadInterval) and the lease owner's (batch calls, lost leases):
	// see sqsloop.Observer; package otelsqsloop makes OpenTelemetry spans
	// and metrics of them. Nil (the default) costs nothing. It is also the
	// lease owner's, unless Visibility.Observer is set.
	Observer sqsloop.Observer
}

func (c Config) withDefaults() Config {
	if c.Concurrency == 0 {
		c.Concurrency = defaultConcurrency
	}
	if c.WaitTime == 0 {
		c.WaitTime = defaultWaitTime
	}
	if c.Backoff == nil {
		c.Backoff = sqsloop.ExponentialBackoff(0, 0)
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.QueueReadInterval == 0 {
		c.QueueReadInterval = defaultQueueReadInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Visibility.Observer == nil {
		c.Visibility.Observer = c.Observer
	}
	if c.validVisibilityTimeout() {
		// Else Validate reports VisibilityTimeout (or Run reads it), and
		// the lease owner keeps its own defaults rather than adding
		// confusing errors.
		c.Visibility, _ = leases.ForVisibilityTimeout(c.Visibility, c.VisibilityTimeout) // its problems: see Validate
	}
	return c
}

// validVisibilityTimeout reports whether VisibilityTimeout is in its range.
func (c Config) validVisibilityTimeout() bool {
	return c.VisibilityTimeout >= time.Second && c.VisibilityTimeout <= sqsloop.MaxVisibilityTimeout
}

// Validate reports every problem with c (zero fields taking their
// defaults), joined with errors.Join; each names its field and the allowed
// range and wraps sqsloop.ErrInvalidArgument (errors.Is). It returns nil for
// a valid Config.
func (c Config) Validate() error {
	d := c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if d.Concurrency < 1 || d.Concurrency > MaxConcurrency {
		bad("Concurrency: must be between 1 and %d, got %d", MaxConcurrency, d.Concurrency)
	}
	if d.VisibilityTimeout != 0 && !d.validVisibilityTimeout() {
		bad("VisibilityTimeout: must be 0 (the queue's) or between 1s and 12h (SQS 0–43200 s), got %v", d.VisibilityTimeout)
	}
	if d.WaitTime < time.Second || d.WaitTime > sqsloop.MaxWaitTime {
		bad("WaitTime: must be between 1s and 20s (SQS WaitTimeSeconds), got %v", d.WaitTime)
	}
	if d.ShutdownTimeout < 0 {
		bad("ShutdownTimeout: must be > 0 (0 means %v), got %v", DefaultShutdownTimeout, d.ShutdownTimeout)
	}
	if d.LatencyTarget < 0 {
		bad("LatencyTarget: must be ≥ 0 (0: no recommendation), got %v", d.LatencyTarget)
	}
	if d.QueueReadInterval < time.Second || d.QueueReadInterval > time.Hour {
		bad("QueueReadInterval: must be between 1s and 1h (0 means %v), got %v", defaultQueueReadInterval, d.QueueReadInterval)
	}
	if d.ExitWhenIdle < 0 {
		bad("ExitWhenIdle: must be ≥ 0 (0: never), got %v", d.ExitWhenIdle)
	}
	for i, name := range d.MessageAttributeNames {
		if name == "" {
			bad("MessageAttributeNames[%d]: must not be empty", i)
		}
	}
	for i, mw := range d.Middleware {
		if mw == nil {
			bad("Middleware[%d]: must not be nil", i)
		}
	}
	vis := leases.ValidateAnyTimeout(d.Visibility) // VisibilityTimeout 0: the rest at start-up
	if d.validVisibilityTimeout() {
		_, vis = leases.ForVisibilityTimeout(d.Visibility, d.VisibilityTimeout) // the visibility timeout is VisibilityTimeout
	}
	if vis != nil {
		for _, e := range unjoin(vis) {
			errs = append(errs, fmt.Errorf("Visibility.%w", e))
		}
	}
	return errors.Join(errs...)
}

// unjoin splits an errors.Join result into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
