package visibility

import (
	"container/heap"
	"context"
	"errors"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sqsloop/sqsloop"
)

// pending is one lease of a sweep's batch with the visibility it asks for.
type pending struct {
	l     *Lease
	vt    time.Duration
	final bool
}

// sweep extends every lease due at now, reports the ones that lapsed, and
// schedules the rest. It runs on Run's goroutine only.
func (e *Extender) sweep(ctx context.Context, now time.Time) {
	e.mu.Lock()
	var batch []pending
	var lost []*Lease
	var later []*Lease
	for len(e.leases) > 0 && !e.leases[0].due.After(now) {
		l := heap.Pop(&e.leases).(*Lease)
		switch {
		case !now.Before(l.deadline):
			lost = append(lost, e.markLost(l, l.endReason()))
		case e.alive(l):
			if p, ok := e.request(l, now); ok {
				batch = append(batch, p)
				continue
			}
			l.due = l.deadline
			later = append(later, l)
		default:
			// No proof of work since the last extension: no extension. Look
			// again an Interval later, and a last time Interval/2 before the
			// deadline (an extension sent then still lands); at the deadline
			// the lease has lapsed.
			l.due = e.nextLook(l, now)
			later = append(later, l)
		}
	}
	// A call goes out anyway: fill its last batch with alive leases that
	// would come due within the next interval.
	if r := len(batch) % sqsloop.MaxBatchSize; r != 0 {
		horizon := now.Add(e.cfg.Interval)
		for need := sqsloop.MaxBatchSize - r; need > 0 && len(e.leases) > 0 && !e.leases[0].due.After(horizon); {
			l := heap.Pop(&e.leases).(*Lease)
			if e.alive(l) {
				if p, ok := e.request(l, now); ok {
					batch = append(batch, p)
					need--
					continue
				}
			}
			later = append(later, l)
		}
	}
	for _, l := range later {
		heap.Push(&e.leases, l)
	}
	done := make(chan struct{})
	for _, p := range batch {
		p.l.sending = done
	}
	e.mu.Unlock()

	results := e.send(ctx, batch)

	e.mu.Lock()
	for i, p := range batch {
		l := p.l
		l.sending = nil
		if l.detached {
			continue
		}
		if lostNow := e.apply(l, p, results[i], now); lostNow {
			lost = append(lost, l)
			continue
		}
		heap.Push(&e.leases, l)
	}
	e.mu.Unlock()
	close(done)

	for _, l := range lost {
		e.report(l)
	}
}

// nextLook is when to look again at l, not alive at now.
func (e *Extender) nextLook(l *Lease, now time.Time) time.Time {
	last := l.deadline.Add(-e.cfg.Interval / 2)
	next := now.Add(e.cfg.Interval)
	switch {
	case next.Before(last):
		return next
	case now.Before(last):
		return last
	}
	return l.deadline
}

// alive reports whether l has earned an extension. Called with e.mu held.
func (e *Extender) alive(l *Lease) bool {
	if l.final {
		return false
	}
	if e.cfg.Policy == FixedInterval {
		return true
	}
	return l.hb != nil && l.hb.LastBeat().After(l.lastExt)
}

// request builds l's extension at now, clamped to the ceiling. ok is false
// when the ceiling leaves less than a second to ask for.
func (e *Extender) request(l *Lease, now time.Time) (pending, bool) {
	vt := wholeSeconds(e.cfg.Extension) // as SQS will count it
	if now.Add(vt).After(l.ceiling) {
		vt = l.ceiling.Sub(now).Truncate(time.Second)
		if vt < time.Second {
			l.final = true
			return pending{}, false
		}
		return pending{l: l, vt: vt, final: true}, true
	}
	return pending{l: l, vt: vt}, true
}

// send issues the batch in calls of at most MaxBatchSize entries, a few at
// a time, and returns one error per entry.
func (e *Extender) send(ctx context.Context, batch []pending) []error {
	results := make([]error, len(batch))
	var g errgroup.Group
	g.SetLimit(maxParallelCalls)
	for start := 0; start < len(batch); start += sqsloop.MaxBatchSize {
		chunk := batch[start:min(start+sqsloop.MaxBatchSize, len(batch))]
		out := results[start : start+len(chunk)]
		g.Go(func() error {
			changes := make([]sqsloop.VisibilityChange, len(chunk))
			for i, p := range chunk {
				changes[i] = sqsloop.VisibilityChange{ReceiptHandle: p.l.msg.ReceiptHandle, Timeout: p.vt}
			}
			e.calls.Add(1)
			callCtx, cancel := context.WithTimeout(ctx, min(e.cfg.Interval/2, maxCallTimeout))
			defer cancel()
			for n := int64(len(chunk)); ; {
				if old := e.largest.Load(); n <= old || e.largest.CompareAndSwap(old, n) {
					break
				}
			}
			errs, err := e.mb.ChangeVisibility(callCtx, changes)
			for i := range out {
				switch {
				case err != nil:
					out[i] = err
				case i < len(errs):
					out[i] = errs[i]
				default:
					out[i] = errors.New("visibility: no result for entry")
				}
			}
			return nil
		})
	}
	_ = g.Wait() // the calls report per entry; none returns an error
	return results
}

// apply records the outcome of l's extension sent at sentAt and schedules
// l; it reports whether l is now lost. Called with e.mu held.
func (e *Extender) apply(l *Lease, p pending, err error, sentAt time.Time) bool {
	switch {
	case err == nil:
		e.extended.Add(1)
		l.lastExt = sentAt
		l.deadline = sentAt.Add(p.vt)
		l.final = p.final
		l.failures, l.lastErr = 0, nil
		l.due = e.nextDue(l)
		return false
	case permanent(err):
		e.markLost(l, err)
		return true
	}
	e.failures.Add(1)
	l.failures++
	l.lastErr = err
	e.cfg.Logger.Warn("visibility: extension failed; will try again",
		slog.String("message_id", l.msg.ID), slog.Int("failures", l.failures), slog.Any("error", err))
	if l.failures >= e.cfg.MaxFailures {
		e.markLost(l, err)
		return true
	}
	// Spread the remaining tries over the margin Interval leaves before the
	// deadline, so all MaxFailures tries happen while the lease holds.
	l.due = sentAt.Add(e.cfg.Interval / time.Duration(e.cfg.MaxFailures+1))
	if l.due.After(l.deadline) {
		l.due = l.deadline
	}
	return false
}

// permanent reports whether err ends a lease at once rather than being
// tried again: the handle is stale, the ceiling is reached, or the mailbox
// or queue is gone or rejects the request.
func permanent(err error) bool {
	for _, target := range []error{sqsloop.ErrReceiptHandleExpired, sqsloop.ErrLeaseCeiling,
		sqsloop.ErrMailboxClosed, sqsloop.ErrQueueNotFound, sqsloop.ErrInvalidArgument} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// wholeSeconds rounds d up to a whole number of seconds, as SQS counts
// visibility timeouts.
func wholeSeconds(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// endReason is why l's deadline passed without an extension.
func (l *Lease) endReason() error {
	switch {
	case l.final:
		return sqsloop.ErrLeaseCeiling
	case l.lastErr != nil:
		return l.lastErr
	}
	return ErrLeaseLapsed
}

// markLost records that l is lost for reason. Called with e.mu held.
func (e *Extender) markLost(l *Lease, reason error) *Lease {
	l.lost = &LeaseLostError{MessageID: l.msg.ID, Reason: reason}
	return l
}

// report tells the logger, the hook and the handler that l is lost. Called
// without e.mu, on Run's goroutine.
func (e *Extender) report(l *Lease) {
	e.lost.Add(1)
	e.cfg.Logger.Warn("visibility: lease lost; the message may be delivered again",
		slog.String("message_id", l.msg.ID), slog.Int("receive_count", l.msg.ReceiveCount), slog.Any("reason", l.lost))
	if e.cfg.OnLeaseLost != nil {
		e.cfg.OnLeaseLost(LeaseLost{MessageID: l.msg.ID, ReceiveCount: l.msg.ReceiveCount, Err: l.lost})
	}
	if e.cfg.CancelOnLeaseLost && l.cancel != nil {
		l.cancel(l.lost)
	}
}
