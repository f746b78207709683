package sqlmailbox

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// SweepStats are what one sweep found and did.
type SweepStats struct {
	// Queues is how many queues it looked at.
	Queues int
	// ExpiredFound counts leases found lapsed (a receive's visibility
	// timeout ended without an ack or a nack) that no receive had taken
	// again yet; Recovered of them were marked no longer leased (they were
	// already visible: the receive query takes a lapsed lease's message by
	// itself), and Failed were moved to the dead-letter queue, their receive
	// count having reached the redrive policy's maxReceiveCount.
	ExpiredFound, Recovered, Failed int
	// RetentionDeleted counts messages deleted for outliving their queue's
	// retention period.
	RetentionDeleted int
	// DeduplicationIDsPruned counts FIFO deduplication IDs forgotten after
	// DeduplicationWindow.
	DeduplicationIDsPruned int
	// AuditTrimmed and ArchiveTrimmed count audit and archive rows deleted
	// for outliving Config.AuditRetention and Config.ArchiveRetention.
	AuditTrimmed, ArchiveTrimmed int
	// ReceiversRemoved counts receiver rows deleted, not seen for
	// ReceiverRetention (an hour).
	ReceiversRemoved int
	// ByQueue breaks ExpiredFound, Recovered and Failed down by queue: one
	// entry for each queue where the sweep found lapsed leases (what a
	// recovery metric counts: otelsqsloop's LeaseMetrics.Swept).
	ByQueue []QueueSweepStats
	// Duration is how long the sweep took.
	Duration time.Duration
}

// QueueSweepStats are what one sweep found of one queue's lapsed leases
// (SweepStats says what each counts).
type QueueSweepStats struct {
	Queue                           string
	ExpiredFound, Recovered, Failed int
}

// Sweep does, in one pass over every queue of the database, what no receive
// does: it audits leases that lapsed since the queue's last sweep and moves
// those whose receive count reached maxReceiveCount to the dead-letter
// queue (a receive would move them too, when it got to them), deletes
// messages older than their queue's retention period, forgets expired FIFO
// deduplication IDs, and trims the audit table (and the acked tally
// LeaseStats reads, with it), the archive table and the receiver registry
// to their retention. It is optional: without it queues
// still work, lapsed leases are still recovered by receives, and only the
// tables grow. Several processes may sweep at once; each row is counted by
// one of them.
//
// Errors: sqsloop.ErrMailboxClosed after Close; ctx's error; or the
// database's (a sweep that fails part-way keeps what it did). Safe for
// concurrent use.
func (s *Store) Sweep(ctx context.Context) (SweepStats, error) {
	if err := s.check("Sweep"); err != nil {
		return SweepStats{}, err
	}
	start := time.Now()
	c, err := s.d.Sweep(ctx, driver.SweepArgs{
		Now:               start,
		AuditRetention:    s.cfg.AuditRetention,
		ArchiveRetention:  s.cfg.ArchiveRetention,
		ReceiverRetention: ReceiverRetention,
	})
	st := SweepStats{Queues: c.Queues, ExpiredFound: c.ExpiredFound, Recovered: c.Recovered, Failed: c.Failed,
		RetentionDeleted: c.RetentionDeleted, DeduplicationIDsPruned: c.DeduplicationIDsPruned,
		AuditTrimmed: c.AuditTrimmed, ArchiveTrimmed: c.ArchiveTrimmed, ReceiversRemoved: c.ReceiversRemoved,
		Duration: time.Since(start)}
	for _, q := range c.ByQueue {
		st.ByQueue = append(st.ByQueue, QueueSweepStats{Queue: q.Queue, ExpiredFound: q.ExpiredFound, Recovered: q.Recovered, Failed: q.Failed})
	}
	if err != nil {
		return st, s.callError(ctx, "sweep", "*", err)
	}
	if st.Failed > 0 {
		s.hub.wakeAll() // dead letters arrived in some DLQ
	}
	return st, nil
}

// Sweeper sweeps a Store at an interval, as a loop a lifecycle.LoopGroup
// can own: Run sweeps at once and then every interval until its context
// ends. Build it with Store.Sweeper.
type Sweeper struct {
	s        *Store
	interval time.Duration
	report   func(SweepStats, error)
}

// Sweeper returns a loop that sweeps s every interval (0 means
// DefaultSweepInterval, 1 minute), calling report, if not nil, with each
// sweep's statistics and error, from Run's goroutine.
func (s *Store) Sweeper(interval time.Duration, report func(SweepStats, error)) *Sweeper {
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	return &Sweeper{s: s, interval: interval, report: report}
}

// Run sweeps at once and then every interval, until ctx ends; it returns
// nil then. A failed sweep is reported and the next one tried on time; a
// closed Store ends the loop with its error (wrapping
// sqsloop.ErrMailboxClosed). Run is meant to be called once, from one
// goroutine (lifecycle.Runnable).
func (w *Sweeper) Run(ctx context.Context) error {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		st, err := w.s.Sweep(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if w.report != nil {
			w.report(st, err)
		}
		if err := w.s.check("Sweep"); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
