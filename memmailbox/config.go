package memmailbox

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Defaults and limits of a queue, as SQS has them.
const (
	// defaultVisibilityTimeout is a queue's visibility timeout when
	// QueueConfig.VisibilityTimeout is 0: 30 seconds, as in SQS.
	defaultVisibilityTimeout = 30 * time.Second

	// maxReceiveCountLimit is the largest MaxReceiveCount a redrive policy
	// accepts (SQS: maxReceiveCount 1–1,000).
	maxReceiveCountLimit = 1000

	// deduplicationInterval is how long a FIFO queue remembers a
	// deduplication ID: a send with the same ID within 5 minutes is accepted
	// but not enqueued again (SQS's deduplication interval).
	deduplicationInterval = 5 * time.Minute

	// maxQueueNameLength is the longest queue name SQS accepts: 80
	// characters, including the ".fifo" suffix of a FIFO queue.
	maxQueueNameLength = 80

	// fifoSuffix ends the name of every FIFO queue, and of no other (SQS rule).
	fifoSuffix = ".fifo"
)

// QueueConfig is the configuration of one queue, the subset of SQS queue
// attributes that memmailbox honours. The zero value is a standard queue with
// the SQS defaults. A QueueConfig is a plain value, safe to copy and compare.
type QueueConfig struct {
	// VisibilityTimeout is the queue's default visibility timeout, 0–12 h
	// (sqsloop.MaxVisibilityTimeout), rounded up to whole seconds as SQS
	// counts it (sqsloop.WholeSeconds); 0 means defaultVisibilityTimeout
	// (30 s). Receive does not use it:
	// sqsloop.ReceiveRequest.VisibilityTimeout is always explicit.
	// QueueAttributes reports it.
	VisibilityTimeout time.Duration

	// Delay postpones the first delivery of every message sent without its
	// own Delay, 0–15 min (sqsloop.MaxDelay; SQS DelaySeconds 0–900),
	// rounded up to whole seconds (sqsloop.WholeSeconds).
	Delay time.Duration

	// MaxReceiveCount is the redrive policy's maxReceiveCount, 1–1,000, or 0
	// for no redrive policy. A message already received this many times is
	// moved to DeadLetterQueue by the receive that would deliver it again.
	// As in SQS, the moved message keeps its ID and approximate receive
	// count, so a DLQ with its own redrive policy may move it on at its
	// first receive there.
	MaxReceiveCount int

	// DeadLetterQueue names the DLQ, a queue of the same Broker that must
	// exist when this one is created and be of the same type (FIFO or
	// standard), as SQS requires. Set both MaxReceiveCount and
	// DeadLetterQueue, or neither.
	DeadLetterQueue string

	// FIFO makes a FIFO queue: its name must end in ".fifo", every send needs
	// a MessageGroupID, order is kept within a message group and a group
	// with a message in flight delivers nothing else.
	FIFO bool

	// ContentBasedDeduplication makes a FIFO queue deduplicate sends without
	// a DeduplicationID by the SHA-256 of the body. Only for FIFO queues.
	ContentBasedDeduplication bool
}

// Validate reports every problem of c, joined with errors.Join; each wraps
// sqsloop.ErrInvalidArgument and names the field and its allowed range. It
// returns nil for a valid config. Whether DeadLetterQueue exists is checked by
// Broker.CreateQueue, not here.
func (c QueueConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("memmailbox: QueueConfig."+format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if c.VisibilityTimeout < 0 || c.VisibilityTimeout > sqsloop.MaxVisibilityTimeout {
		bad("VisibilityTimeout %v out of range 0–12h (0 means the default, 30s)", c.VisibilityTimeout)
	}
	if c.Delay < 0 || c.Delay > sqsloop.MaxDelay {
		bad("Delay %v out of range 0–15m", c.Delay)
	}
	if c.MaxReceiveCount < 0 || c.MaxReceiveCount > maxReceiveCountLimit {
		bad("MaxReceiveCount %d out of range 1–%d (0 means no redrive policy)", c.MaxReceiveCount, maxReceiveCountLimit)
	}
	if (c.MaxReceiveCount == 0) != (c.DeadLetterQueue == "") {
		bad("MaxReceiveCount (%d) and DeadLetterQueue (%q): set both for a redrive policy, or neither", c.MaxReceiveCount, c.DeadLetterQueue)
	}
	if c.ContentBasedDeduplication && !c.FIFO {
		bad("ContentBasedDeduplication: only a FIFO queue deduplicates")
	}
	return errors.Join(errs...)
}

// withDefaults returns c with zero fields replaced by their defaults and
// durations rounded up to whole seconds, as SQS keeps them.
func (c QueueConfig) withDefaults() QueueConfig {
	if c.VisibilityTimeout == 0 {
		c.VisibilityTimeout = defaultVisibilityTimeout
	}
	c.VisibilityTimeout = sqsloop.WholeSeconds(c.VisibilityTimeout)
	c.Delay = sqsloop.WholeSeconds(c.Delay)
	return c
}

// validateQueueName checks name against SQS's rules: 1–80 characters of
// letters, digits, hyphens and underscores, plus ".fifo" for a FIFO queue.
func validateQueueName(name string, fifo bool) error {
	base := name
	if fifo {
		if !strings.HasSuffix(name, fifoSuffix) {
			return fmt.Errorf("memmailbox: queue name %q: a FIFO queue's name must end in %q: %w", name, fifoSuffix, sqsloop.ErrInvalidArgument)
		}
		base = strings.TrimSuffix(name, fifoSuffix)
	}
	if len(base) == 0 || len(name) > maxQueueNameLength {
		return fmt.Errorf("memmailbox: queue name %q: length %d out of range 1–%d: %w", name, len(name), maxQueueNameLength, sqsloop.ErrInvalidArgument)
	}
	for _, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("memmailbox: queue name %q: character %q not allowed (letters, digits, '-' and '_' only): %w",
				name, c, sqsloop.ErrInvalidArgument)
		}
	}
	return nil
}
