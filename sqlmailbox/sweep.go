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

// The sweep's policy, one for every database: the drivers do its steps,
// each one transaction of at most the rows they are given, and the policy
// decides how many and how often. A step handles sweepRows rows at first;
// one that took longer than sweepSlice halves the next one's (down to
// sweepMinRows), one that took under half of it doubles them (up to
// sweepRows); after each, the sweep waits as long as the step took. So a
// sweep holds what it locks (SQLite's one write lock, PostgreSQL's row
// locks) for about sweepSlice at a time and at most half the time
// whatever its backlog: this process's lease extensions, which share
// SQLite's one connection, wait one step at most, and another process's
// writes, whose busy handler tries again every few to 100 ms, find the
// lock free between steps.
const (
	sweepRows    = 500
	sweepMinRows = 10
	sweepSlice   = 20 * time.Millisecond
)

// sweepSteps runs a sweep's steps with the policy.
type sweepSteps struct {
	rows int // the next step's
}

// do runs one step, f, with the number of rows it may handle, then waits as
// long as it took (or until ctx ends: ctx's error).
func (w *sweepSteps) do(ctx context.Context, f func(rows int) error) error {
	start := time.Now()
	err := f(w.rows)
	took := time.Since(start)
	switch {
	case took > sweepSlice:
		w.rows = max(w.rows/2, sweepMinRows)
	case took < sweepSlice/2:
		w.rows = min(w.rows*2, sweepRows)
	}
	if err != nil {
		return err
	}
	t := time.NewTimer(took)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
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
// one of them, and every lapse is audited once, unless a receive took the
// message again (or an ack deleted it) first.
//
// It works in short transactions, whatever its backlog: each handles up to
// 500 rows and about 20 ms of work, and the sweep waits as long between
// them, so that it holds the database's locks at most half the time (on
// SQLite, where every write takes the file's one lock, a sweep of 100,000
// expired messages leaves this process's lease extensions and other
// processes' receives their turns in between). A sweep of a large backlog
// takes longer for it: about twice its work.
//
// Errors: sqsloop.ErrMailboxClosed after Close; ctx's error; or the
// database's (a sweep that fails part-way keeps what it did). Safe for
// concurrent use.
func (s *Store) Sweep(ctx context.Context) (SweepStats, error) {
	if err := s.check("Sweep"); err != nil {
		return SweepStats{}, err
	}
	start := time.Now()
	st, err := s.sweep(ctx, start)
	st.Duration = time.Since(start)
	if err != nil {
		return st, s.callError(ctx, "sweep", "*", err)
	}
	if st.Failed > 0 {
		s.hub.wakeAll() // dead letters arrived in some DLQ
	}
	return st, nil
}

// sweep runs a sweep's steps (see Sweep).
func (s *Store) sweep(ctx context.Context, now time.Time) (SweepStats, error) {
	var st SweepStats
	steps := sweepSteps{rows: sweepRows}
	queues, err := s.d.SweepQueues(ctx, now)
	if err != nil {
		return st, err
	}
	for i := range queues {
		q := &queues[i]
		qs := QueueSweepStats{Queue: q.Name}
		for at := driver.FirstLapsed(q); !at.Done; {
			if err := steps.do(ctx, func(rows int) error {
				ls, err := s.d.SweepLapsed(ctx, q, at, rows)
				qs.Recovered += ls.Recovered
				qs.Failed += ls.Failed
				at = ls.Next
				return err
			}); err != nil {
				return st, err
			}
		}
		qs.ExpiredFound = qs.Recovered + qs.Failed
		st.ExpiredFound += qs.ExpiredFound
		st.Recovered += qs.Recovered
		st.Failed += qs.Failed
		if qs.ExpiredFound > 0 {
			st.ByQueue = append(st.ByQueue, qs)
		}
		if err := s.d.MarkSwept(ctx, q); err != nil {
			return st, err
		}
		for more := true; more; {
			if err := steps.do(ctx, func(rows int) error {
				n, m, err := s.d.SweepRetention(ctx, q, rows)
				st.RetentionDeleted += n
				more = m
				return err
			}); err != nil {
				return st, err
			}
		}
		st.Queues++
	}
	var tallies int // the acked tally's hours: not reported
	for _, t := range []struct {
		table driver.Table
		age   time.Duration
		n     *int
	}{
		{driver.AuditTable, s.cfg.AuditRetention, &st.AuditTrimmed},
		{driver.AckedTable, s.cfg.AuditRetention, &tallies},
		{driver.ArchiveTable, s.cfg.ArchiveRetention, &st.ArchiveTrimmed},
		{driver.ReceiverTable, ReceiverRetention, &st.ReceiversRemoved},
	} {
		for more := true; more; {
			if err := steps.do(ctx, func(rows int) error {
				n, err := s.d.Trim(ctx, t.table, now, t.age, rows)
				*t.n += n
				more = n == rows
				return err
			}); err != nil {
				return st, err
			}
		}
	}
	for at := (driver.DedupCursor{}); !at.Done; {
		if err := steps.do(ctx, func(rows int) error {
			n, next, err := s.d.TrimDedup(ctx, now, at, rows)
			st.DeduplicationIDsPruned += n
			at = next
			return err
		}); err != nil {
			return st, err
		}
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
