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

	// DefaultReceiverTTL is how long the receiver registry counts a
	// receiving Mailbox alive without a renewal of its row when
	// Config.ReceiverTTL is 0: 90 s, longer than a consumer at its
	// defaults goes between lease extensions (60 s), which are all a
	// receiver whose handlers are busy sends.
	DefaultReceiverTTL = 90 * time.Second

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
// retention, archive and ReceiverTTL settings, since any of them may sweep
// or list the receivers.
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

	// ReceiverTTL is how long the receiver registry (Store.Receivers)
	// counts a receiving Mailbox alive after the last renewal of its row,
	// 3 s–3 h; 0 means DefaultReceiverTTL (90 s). A Mailbox renews its row
	// at most every third of it, on its Receive, Delete and
	// ChangeVisibility calls (it starts no goroutine), so a receiver that
	// stops them all (a consumer extends busy handlers' leases every
	// visibility.Config.Interval: keep that below a third of ReceiverTTL),
	// or dies, is shown dead once ReceiverTTL has passed.
	ReceiverTTL time.Duration

	// PollInterval bounds how long a long poll waits without looking at the
	// database, 10 ms–1 min; 0 means the database package's
	// DefaultPollInterval (sqlite: 200 ms, for writers in other processes,
	// which it cannot hear; postgres: 2 s, a safety net under
	// LISTEN/NOTIFY). A message made receivable through the same Store
	// wakes a long poll at once, and on postgres one made receivable by any
	// process. On postgres the oldest long poll of a queue looks at least
	// every second whatever PollInterval says (see the package doc).
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
	check("ReceiverTTL", c.ReceiverTTL, 3*time.Second, 3*time.Hour)
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
	if c.ReceiverTTL == 0 {
		c.ReceiverTTL = DefaultReceiverTTL
	}
	if c.PollInterval == 0 {
		c.PollInterval = poll
	}
	return c
}
