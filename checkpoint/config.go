package checkpoint

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
)

// DefaultRetention is Config.Retention's default: 14 days, the longest
// retention period SQS allows, so that a checkpoint never expires before
// its message could (jobstate.DefaultRetention).
const DefaultRetention = jobstate.DefaultRetention

// MaxQueueName bounds Config.Queue: 256 bytes (jobstate.MaxNamespace).
const MaxQueueName = jobstate.MaxNamespace

// Config is a Checkpoints' configuration. Zero means default.
type Config struct {
	// Queue names the queue (its name or URL; any string of at most
	// MaxQueueName bytes): a checkpoint's key is Queue and the message
	// ID. Message IDs are unique within a queue (SQS's are random UUIDs,
	// so unique anywhere in practice); set Queue when consumers of
	// several queues share a store, so that a message moved to a
	// dead-letter queue (it keeps its ID) and consumed there does not find
	// its checkpoint from the source queue. Default "".
	Queue string
	// Retention is how long a checkpoint is kept after its last save,
	// and a finished job's mark (done, or failed for good) after its
	// job's end: the queue's retention period
	// (sqsloop.QueueAttributes.RetentionPeriod), so that every later
	// delivery of the message finds them. Default DefaultRetention (14
	// days); at least 1 minute.
	Retention time.Duration
	// Logger gets a WARN when a finished job's mark could not be written.
	// Default slog.Default().
	Logger *slog.Logger
}

// Validate returns an error wrapping sqsloop.ErrInvalidArgument that
// names every field out of range, or nil.
func (c Config) Validate() error {
	var errs []error
	if len(c.Queue) > MaxQueueName {
		errs = append(errs, fmt.Errorf("checkpoint: Config.Queue: %d bytes, want at most %d: %w", len(c.Queue), MaxQueueName, sqsloop.ErrInvalidArgument))
	}
	if c.Retention != 0 && c.Retention < jobstate.MinRetention {
		errs = append(errs, fmt.Errorf("checkpoint: Config.Retention: %v, want 0 (default %v) or at least %v: %w", c.Retention, DefaultRetention, jobstate.MinRetention, sqsloop.ErrInvalidArgument))
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
