package idempotency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
)

// Defaults of Config.
const (
	// DefaultRetention is Config.Retention's default: 14 days, the longest
	// retention period SQS allows, so that a completed key outlives every
	// delivery of its message (jobstate.DefaultRetention).
	DefaultRetention = jobstate.DefaultRetention
	// DefaultLease is the lease length a claim follows for a message run
	// without a lease owner that does not say its visibility timeout
	// (sqslambda without a client): 30 s, SQS's default visibility
	// timeout.
	DefaultLease = 30 * time.Second
)

// MaxQueueName bounds Config.Queue: 256 bytes (jobstate.MaxNamespace).
const MaxQueueName = jobstate.MaxNamespace

// Config is an Idempotency's configuration. Zero means default.
type Config struct {
	// Queue is a namespace for the keys (the queue's name or URL, or a
	// name of the job): every key is prefixed with it in the store. Give
	// every consumer that must run a key once the same Queue. Default "";
	// at most MaxQueueName bytes.
	Queue string
	// Key returns a message's key. An error is returned as the handler's
	// (the message is nacked; wrap it with sqsloop.Permanent to send the
	// message to the dead-letter queue). Default: the message ID. The key
	// with Queue is at most jobstate.MaxKeySize bytes long, less 14.
	Key func(m *sqsloop.Message) (string, error)
	// Retention is how long a completed key is remembered, from its
	// completion: the queue's retention period (sqsloop.QueueAttributes.
	// RetentionPeriod) covers every redelivery of a message; with Key
	// deriving keys from bodies, as long as a duplicate may be sent.
	// Default DefaultRetention (14 days); at least 1 minute.
	Retention time.Duration
	// OnDuplicate, when set, is called instead of acking a delivery whose
	// key is completed, with the result stored with it (nil if none): to
	// send a reply again, say. What it returns is the handler's result.
	OnDuplicate func(ctx context.Context, m *sqsloop.Message, result []byte) error
	// Logger gets a WARN when a claim is lost, a completion could not be
	// recorded, or a claim could not be released. Default slog.Default().
	Logger *slog.Logger
}

// maxKey is the longest key Config.Key may return with Config.Queue.
const maxKey = jobstate.MaxKeySize - len("idempotency//")

// Validate returns an error wrapping sqsloop.ErrInvalidArgument that
// names every field out of range, or nil.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("idempotency: Config."+format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if len(c.Queue) > MaxQueueName {
		bad("Queue: %d bytes, want at most %d", len(c.Queue), MaxQueueName)
	}
	if c.Retention != 0 && c.Retention < jobstate.MinRetention {
		bad("Retention: %v, want 0 (default %v) or at least %v", c.Retention, DefaultRetention, jobstate.MinRetention)
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
