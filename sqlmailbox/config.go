package sqlmailbox

import (
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Defaults of Config.
const (
	// DefaultAuditRetention is how long the audit table keeps a row when
	// Config.AuditRetention is 0: 14 days, SQS's longest retention period,
	// so a failure's record outlives the message it is about.
	DefaultAuditRetention = 14 * 24 * time.Hour

	// DefaultArchiveRetention is how long the archive table keeps an acked
	// message when Config.ArchiveRetention is 0: 7 days.
	DefaultArchiveRetention = 7 * 24 * time.Hour

	// DefaultWorkerHeartbeat is how often a receiving Mailbox renews its
	// worker row when Config.WorkerHeartbeat is 0: 30 s. A worker not seen
	// for DeadAfterBeats heartbeats (90 s) is shown dead: longer than a
	// consumer at its defaults goes between lease extensions (60 s), which
	// are all a worker whose handlers are busy sends.
	DefaultWorkerHeartbeat = 30 * time.Second

	// DeadAfterBeats is how many worker heartbeats may be missed before
	// Store.Workers shows the worker dead: 3.
	DeadAfterBeats = 3

	// DefaultSweepInterval is how often a Sweeper sweeps when its interval
	// is 0: 1 minute.
	DefaultSweepInterval = time.Minute

	// DeduplicationWindow is how long a FIFO queue remembers a
	// deduplication ID: a send with the same ID within 5 minutes succeeds
	// without storing the message again (SQS's deduplication interval).
	DeduplicationWindow = 5 * time.Minute

	// maxPollInterval bounds Config.PollInterval.
	maxPollInterval = time.Minute
)

// Config tunes a Store. The zero value is valid: every field takes its
// default. Every process that opens one database should use the same
// retention and archive settings, since any of them may sweep.
type Config struct {
	// AuditRetention is how long the audit table keeps a row (Sweep deletes
	// older ones), 1 min–1 year; 0 means DefaultAuditRetention (14 days).
	AuditRetention time.Duration

	// Archive keeps every acked message in the archive table (its ID, body,
	// message attributes, receive count, and when it was sent and acked),
	// for audit and replay, as pgmq's archive does; Delete then costs one
	// insert more per message. Default false: an ack deletes.
	Archive bool

	// ArchiveRetention is how long the archive table keeps a message (Sweep
	// deletes older ones), 1 min–1 year; 0 means DefaultArchiveRetention
	// (7 days).
	ArchiveRetention time.Duration

	// WorkerHeartbeat is how often a Mailbox that receives renews its
	// worker row, 1 s–1 h; 0 means DefaultWorkerHeartbeat (30 s). The
	// renewal rides on its Receive, Delete and ChangeVisibility calls (a
	// Mailbox starts no goroutine), so a worker that stops them all (a
	// consumer extends busy handlers' leases every visibility.Config.Interval,
	// so keep that below the heartbeat), or dies, stops renewing and is
	// shown dead after DeadAfterBeats (3) heartbeats.
	WorkerHeartbeat time.Duration

	// PollInterval bounds how long a long poll waits without looking at the
	// database, 10 ms–1 min; 0 means the driver's (sqlite: 200 ms, for
	// writers in other processes, which it cannot hear; postgres: 2 s, a
	// safety net under LISTEN/NOTIFY). A message sent in the same Store
	// wakes a long poll at once, and on postgres one sent by any process.
	PollInterval time.Duration
}

// Validate returns every problem of c, joined with errors.Join, each naming
// its field and allowed range and wrapping sqsloop.ErrInvalidArgument; nil
// for a valid Config.
func (c Config) Validate() error {
	var errs []error
	check := func(field string, d, lo, hi time.Duration) {
		if d != 0 && (d < lo || d > hi) {
			errs = append(errs, fmt.Errorf("%w: sqlmailbox: Config.%s: must be 0 (the default) or between %v and %v, got %v",
				sqsloop.ErrInvalidArgument, field, lo, hi, d))
		}
	}
	const year = 365 * 24 * time.Hour
	check("AuditRetention", c.AuditRetention, time.Minute, year)
	check("ArchiveRetention", c.ArchiveRetention, time.Minute, year)
	check("WorkerHeartbeat", c.WorkerHeartbeat, time.Second, time.Hour)
	check("PollInterval", c.PollInterval, 10*time.Millisecond, maxPollInterval)
	return errors.Join(errs...)
}

// withDefaults returns c with its zero fields set to their defaults; poll is
// the driver's poll interval.
func (c Config) withDefaults(poll time.Duration) Config {
	if c.AuditRetention == 0 {
		c.AuditRetention = DefaultAuditRetention
	}
	if c.ArchiveRetention == 0 {
		c.ArchiveRetention = DefaultArchiveRetention
	}
	if c.WorkerHeartbeat == 0 {
		c.WorkerHeartbeat = DefaultWorkerHeartbeat
	}
	if c.PollInterval == 0 {
		c.PollInterval = poll
	}
	return c
}
