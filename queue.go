package sqsloop

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Defaults and ranges of the queue attributes a QueueSpec sets, as SQS's
// CreateQueue has them (the SDK's CreateQueue doc).
const (
	// DefaultQueueVisibilityTimeout is a queue's visibility timeout when its
	// QueueSpec leaves it 0: 30 s, as in SQS.
	DefaultQueueVisibilityTimeout = 30 * time.Second

	// DefaultRetentionPeriod is how long a queue keeps a message when its
	// QueueSpec leaves RetentionPeriod 0: 4 days (SQS MessageRetentionPeriod
	// 345,600 s).
	DefaultRetentionPeriod = 4 * 24 * time.Hour

	// MinRetentionPeriod and MaxRetentionPeriod bound a queue's retention
	// period: 1 min to 14 days (SQS MessageRetentionPeriod 60–1,209,600 s).
	// A dead-letter queue made by a QueueSpec gets MaxRetentionPeriod, so a
	// message outlives its stay in the source queue there.
	MinRetentionPeriod = time.Minute
	MaxRetentionPeriod = 14 * 24 * time.Hour

	// MinMaxMessageSize is the smallest MaximumMessageSize a queue accepts:
	// 1,024 bytes (the largest, and the default, is MaxMessageSize, 1 MiB).
	MinMaxMessageSize = 1024

	// MaxMaxReceiveCount is the largest maxReceiveCount a redrive policy
	// accepts (SQS: 1–1,000).
	MaxMaxReceiveCount = 1000

	// MaxQueueNameLength is the longest queue name SQS accepts: 80
	// characters, the ".fifo" suffix of a FIFO queue included.
	MaxQueueNameLength = 80

	// FIFOSuffix ends the name of every FIFO queue, and of no other (SQS rule).
	FIFOSuffix = ".fifo"

	// DeadLetterSuffix is added to a queue's name (before FIFOSuffix) to
	// name the dead-letter queue a QueueSpec with a MaxReceiveCount makes:
	// "orders" → "orders-dlq", "orders.fifo" → "orders-dlq.fifo".
	DeadLetterSuffix = "-dlq"
)

// QueueSpec describes a queue to set up, together with its dead-letter
// queue, in one call of a mailbox package: sqsmailbox, memmailbox and
// sqlmailbox each take it (see their CreateQueue). Zero fields mean SQS's
// defaults. A QueueSpec is a plain value, safe to copy and compare.
//
// Setting a queue up is idempotent: a queue that exists with the same
// attributes is fine; one that exists with other attributes is an error
// wrapping ErrInvalidArgument that names the attributes that differ.
type QueueSpec struct {
	// Name is the queue's name: 1–80 characters (MaxQueueNameLength) of
	// letters, digits, '-' and '_', ending in ".fifo" (FIFOSuffix) for a
	// FIFO queue and only then. With MaxReceiveCount, the dead-letter queue's
	// name (DeadLetterQueueName) must fit the same rule.
	Name string

	// FIFO makes a FIFO queue: every send needs a message group ID, order is
	// kept within a message group, and a group with a message in flight
	// delivers nothing else.
	FIFO bool

	// ContentBasedDeduplication makes a FIFO queue deduplicate sends
	// without a deduplication ID by the SHA-256 of their body, within 5
	// minutes. Only for FIFO queues.
	ContentBasedDeduplication bool

	// VisibilityTimeout is the queue's default visibility timeout, 0–12 h
	// (MaxVisibilityTimeout), rounded up to whole seconds; 0 means
	// DefaultQueueVisibilityTimeout (30 s). The consumer asks for its own
	// on every receive, so this matters to other receivers and to checks.
	VisibilityTimeout time.Duration

	// Delay postpones the first delivery of every message sent without its
	// own delay, 0–15 min (MaxDelay; SQS DelaySeconds), rounded up to whole
	// seconds.
	Delay time.Duration

	// RetentionPeriod is how long the queue keeps a message, 1 min–14 days
	// (MinRetentionPeriod–MaxRetentionPeriod), rounded up to whole seconds;
	// 0 means DefaultRetentionPeriod (4 days).
	RetentionPeriod time.Duration

	// MaxMessageSize is the largest message the queue accepts in bytes,
	// body and message attributes together, 1,024–1,048,576
	// (MinMaxMessageSize–MaxMessageSize); 0 means MaxMessageSize (1 MiB).
	MaxMessageSize int

	// MaxReceiveCount, when above 0, gives the queue a dead-letter queue
	// named DeadLetterQueueName (created, or reused when it exists with the
	// same attributes, before the queue itself) of the same type, with
	// MaxRetentionPeriod, and a redrive policy moving a message there after
	// this many receives, 1–1,000 (MaxMaxReceiveCount). 0: no dead-letter
	// queue.
	MaxReceiveCount int

	// Priority makes the queue deliver the messages sent with a higher
	// priority (the message attribute PriorityAttribute, -9 to 9, higher
	// first, 0 without it) before those with lower ones; on a FIFO queue
	// it orders the message groups by their next message's priority, never
	// the messages within a group. It is a difference from SQS, which has
	// no priorities: only sqlmailbox keeps such queues, and sqsmailbox and
	// memmailbox refuse a spec that sets it (ErrInvalidArgument naming
	// QueueSpec.Priority) rather than ignore it. Its dead-letter queue
	// keeps priorities too.
	Priority bool
}

// DeadLetterQueueName returns the name of the dead-letter queue s makes when
// MaxReceiveCount is above 0: Name with DeadLetterSuffix added before the
// FIFO suffix ("orders-dlq", "orders-dlq.fifo").
func (s QueueSpec) DeadLetterQueueName() string {
	if s.FIFO && strings.HasSuffix(s.Name, FIFOSuffix) {
		return strings.TrimSuffix(s.Name, FIFOSuffix) + DeadLetterSuffix + FIFOSuffix
	}
	return s.Name + DeadLetterSuffix
}

// DeadLetterSpec returns the QueueSpec of the dead-letter queue s makes: its
// name, the same type (FIFO, content-based deduplication, priorities), the longest
// retention period and no redrive policy of its own. Its result is
// meaningful only when s.MaxReceiveCount is above 0.
func (s QueueSpec) DeadLetterSpec() QueueSpec {
	return QueueSpec{
		Name:                      s.DeadLetterQueueName(),
		FIFO:                      s.FIFO,
		ContentBasedDeduplication: s.ContentBasedDeduplication,
		RetentionPeriod:           MaxRetentionPeriod,
		MaxMessageSize:            s.MaxMessageSize,
		Priority:                  s.Priority,
	}
}

// WithDefaults returns s with its zero fields replaced by their defaults
// (VisibilityTimeout 30 s, RetentionPeriod 4 days, MaxMessageSize 1 MiB)
// and its durations rounded up to whole seconds (WholeSeconds), as a queue
// keeps them: two specs that set up the same queue are equal after it.
func (s QueueSpec) WithDefaults() QueueSpec {
	if s.VisibilityTimeout == 0 {
		s.VisibilityTimeout = DefaultQueueVisibilityTimeout
	}
	if s.RetentionPeriod == 0 {
		s.RetentionPeriod = DefaultRetentionPeriod
	}
	if s.MaxMessageSize == 0 {
		s.MaxMessageSize = MaxMessageSize
	}
	s.VisibilityTimeout = WholeSeconds(s.VisibilityTimeout)
	s.Delay = WholeSeconds(s.Delay)
	s.RetentionPeriod = WholeSeconds(s.RetentionPeriod)
	return s
}

// Validate reports every problem of s, joined with errors.Join, or nil for
// a spec SQS's CreateQueue accepts. Each problem wraps ErrInvalidArgument
// (errors.Is) and names its field and allowed range, in the grammar of the
// request rules ("sqsloop: invalid argument: QueueSpec.Delay: must be
// between 0 and 15m (SQS DelaySeconds 0–900), got 20m0s").
func (s QueueSpec) Validate() error {
	var errs []error
	errs = appendQueueName(errs, "QueueSpec.Name", s.Name, s.FIFO)
	if s.MaxReceiveCount > 0 {
		errs = appendQueueName(errs, "QueueSpec.DeadLetterQueueName()", s.DeadLetterQueueName(), s.FIFO)
	}
	if s.ContentBasedDeduplication && !s.FIFO {
		errs = append(errs, invalid("QueueSpec.ContentBasedDeduplication: must be false on a standard queue (only a FIFO queue deduplicates)"))
	}
	if outside(s.VisibilityTimeout, MaxVisibilityTimeout) {
		errs = append(errs, durationError("QueueSpec.VisibilityTimeout", s.VisibilityTimeout, MaxVisibilityTimeout, sqsVisibility))
	}
	if outside(s.Delay, MaxDelay) {
		errs = append(errs, durationError("QueueSpec.Delay", s.Delay, MaxDelay, "SQS DelaySeconds 0–900"))
	}
	if s.RetentionPeriod != 0 && (s.RetentionPeriod < MinRetentionPeriod || s.RetentionPeriod > MaxRetentionPeriod) {
		errs = append(errs, invalid("QueueSpec.RetentionPeriod: must be 0 (4 days) or between 1m and 336h (SQS MessageRetentionPeriod 60–1209600 s), got %v",
			s.RetentionPeriod))
	}
	if s.MaxMessageSize != 0 && (s.MaxMessageSize < MinMaxMessageSize || s.MaxMessageSize > MaxMessageSize) {
		errs = append(errs, invalid("QueueSpec.MaxMessageSize: must be 0 (1 MiB) or between %d and %d bytes (SQS MaximumMessageSize), got %d",
			MinMaxMessageSize, MaxMessageSize, s.MaxMessageSize))
	}
	if s.MaxReceiveCount < 0 || s.MaxReceiveCount > MaxMaxReceiveCount {
		errs = append(errs, invalid("QueueSpec.MaxReceiveCount: must be 0 (no dead-letter queue) or between 1 and %d (SQS maxReceiveCount), got %d",
			MaxMaxReceiveCount, s.MaxReceiveCount))
	}
	return errors.Join(errs...)
}

// appendQueueName appends the problem of a queue name, if any: 1–80
// letters, digits, '-' and '_', with the ".fifo" suffix on a FIFO queue
// only.
func appendQueueName(errs []error, where, name string, fifo bool) []error {
	base, hasSuffix := strings.CutSuffix(name, FIFOSuffix)
	switch {
	case fifo && !hasSuffix:
		return append(errs, invalid("%s: must end in %q on a FIFO queue, got %s", where, FIFOSuffix, quote(name)))
	case !fifo && hasSuffix:
		return append(errs, invalid("%s: must not end in %q on a standard queue, got %s", where, FIFOSuffix, quote(name)))
	case base == "" || len(name) > MaxQueueNameLength:
		return append(errs, invalid("%s: must be 1 to %d characters, got %d", where, MaxQueueNameLength, len(name)))
	}
	for _, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return append(errs, invalid("%s: must hold only letters, digits, '-' and '_', got %s",
				where, fmt.Sprintf("%q in %s", c, quote(name))))
		}
	}
	return errs
}

// Match returns nil when a, the attributes of an existing queue, are those
// s sets up (after WithDefaults): the same visibility timeout, delay,
// retention period, maximum message size, type, content-based
// deduplication, priorities and redrive policy (maxReceiveCount, and a dead-letter
// queue named DeadLetterQueueName, by name or by an ARN ending in
// ":"+name); the approximate counts are ignored. Otherwise it returns an
// error wrapping ErrInvalidArgument that names the queue and every
// attribute that differs, with both values: what a queue-setup call returns
// for a queue that exists with other attributes.
func (s QueueSpec) Match(a QueueAttributes) error {
	w := s.WithDefaults()
	var diffs []string
	differ := func(name string, have, want any) {
		diffs = append(diffs, fmt.Sprintf("%s is %v, the spec asks for %v", name, have, want))
	}
	if a.VisibilityTimeout != w.VisibilityTimeout {
		differ("VisibilityTimeout", a.VisibilityTimeout, w.VisibilityTimeout)
	}
	if a.Delay != w.Delay {
		differ("Delay", a.Delay, w.Delay)
	}
	if a.RetentionPeriod != w.RetentionPeriod {
		differ("RetentionPeriod", a.RetentionPeriod, w.RetentionPeriod)
	}
	if a.MaxMessageSize != w.MaxMessageSize {
		differ("MaxMessageSize", a.MaxMessageSize, w.MaxMessageSize)
	}
	if a.FIFO != w.FIFO {
		differ("FIFO", a.FIFO, w.FIFO)
	}
	if a.ContentBasedDeduplication != w.ContentBasedDeduplication {
		differ("ContentBasedDeduplication", a.ContentBasedDeduplication, w.ContentBasedDeduplication)
	}
	if a.MaxReceiveCount != w.MaxReceiveCount {
		differ("MaxReceiveCount", a.MaxReceiveCount, w.MaxReceiveCount)
	}
	if a.Priority != w.Priority {
		differ("Priority", a.Priority, w.Priority)
	}
	if w.MaxReceiveCount > 0 {
		dlq := w.DeadLetterQueueName()
		if a.DeadLetterQueue != dlq && !strings.HasSuffix(a.DeadLetterQueue, ":"+dlq) {
			differ("DeadLetterQueue", quote(a.DeadLetterQueue), quote(dlq))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return invalid("QueueSpec: the queue %s exists with other attributes: %s", quote(s.Name), strings.Join(diffs, "; "))
}
