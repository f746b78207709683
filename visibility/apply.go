package visibility

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
)

// errNoResult is the error of a batch entry the mailbox gave no result for.
var errNoResult = errors.New("visibility: no result for entry")

// send makes c's batch call and records one error per entry. It runs on a
// sender goroutine and reads only what does not change while c is on the
// wire.
func (m *Manager) send(ctx context.Context, c *call) {
	ctx, cancel := context.WithTimeout(ctx, min(m.cfg.Interval/2, maxCallTimeout))
	defer cancel()
	var errs []error
	var err error
	if c.kind == deleteCall {
		handles := make([]string, len(c.leases))
		for i, l := range c.leases {
			handles[i] = l.msg.ReceiptHandle
		}
		errs, err = m.mb.Delete(ctx, handles)
	} else {
		changes := make([]sqsloop.VisibilityChange, len(c.leases))
		for i, l := range c.leases {
			changes[i] = sqsloop.VisibilityChange{ReceiptHandle: l.msg.ReceiptHandle, Timeout: c.timeouts[i]}
		}
		errs, err = m.mb.ChangeVisibility(ctx, changes)
	}
	c.errs = make([]error, len(c.leases))
	for i := range c.errs {
		switch {
		case err != nil:
			c.errs[i] = err
		case i < len(errs):
			c.errs[i] = errs[i]
		default:
			c.errs[i] = errNoResult
		}
	}
}

// apply records the outcome of c at now. Called with m.mu held, on Run's
// goroutine.
func (m *Manager) apply(c *call, now time.Time) {
	switch c.kind {
	case extendCall:
		m.st.extendCalls.Add(1)
		m.st.largest.Store(max(m.st.largest.Load(), int64(len(c.leases))))
	case deleteCall:
		m.st.deleteCalls.Add(1)
	default:
		m.st.changeCalls.Add(1)
	}
	m.countDenied(c)
	for i, l := range c.leases {
		l.busy = false
		switch c.kind {
		case extendCall:
			m.applyExtension(l, c.timeouts[i], c.errs[i], c.sentAt, now)
		case deleteCall:
			m.applyAck(l, c.errs[i], now)
		default:
			m.applyNack(l, c.errs[i], now)
		}
	}
}

// countDenied keeps the count of consecutive calls of c's kind denied
// access, and gives up at MaxAccessDenied; a queue that is gone or a
// closed mailbox gives up at once. Called with m.mu held.
func (m *Manager) countDenied(c *call) {
	kind := 0
	if c.kind != deleteCall {
		kind = 1
	}
	var denied error // the first entry denied access
	ok := false
	for _, err := range c.errs {
		switch {
		case err == nil:
			ok = true
		case errors.Is(err, sqsloop.ErrAccessDenied):
			if denied == nil {
				denied = err
			}
		case errors.Is(err, sqsloop.ErrQueueNotFound), errors.Is(err, sqsloop.ErrMailboxClosed):
			m.giveUp(fmt.Errorf("visibility: %w", err))
		}
	}
	switch {
	case ok:
		m.denied[kind] = 0
	case denied != nil:
		m.denied[kind]++
		if m.denied[kind] >= MaxAccessDenied {
			op := [2]string{"DeleteMessageBatch", "ChangeMessageVisibilityBatch"}[kind]
			m.giveUp(fmt.Errorf("visibility: %d %s calls in a row denied: %w", m.denied[kind], op, denied))
		}
	}
}

// applyExtension records the outcome of l's extension to vt sent at
// sentAt. Called with m.mu held.
func (m *Manager) applyExtension(l *Lease, vt time.Duration, err error, sentAt, now time.Time) {
	switch {
	case err == nil:
		m.st.extended.Add(1)
		l.lastExt = sentAt
		l.deadline = sentAt.Add(vt)
		l.capped = l.ceiling.Sub(l.deadline) < time.Second
		l.lastErr = nil
		l.due = m.firstLook(l)
	case permanent(err) && !errors.Is(err, sqsloop.ErrAccessDenied):
		m.markLost(l, err)
	default: // transient, or access denied, which may still be propagating
		m.st.failures.Add(1)
		l.lastErr = err
		l.due = m.nextLook(l, now)
		m.log.Warn("visibility: extension failed; will try again at the next look",
			slog.String("message_id", l.msg.ID), slog.Any("error", err))
	}
	if l.decided == holding && l.seq <= m.giveBack {
		l.decided = givenUp
	}
	switch {
	case l.decided != holding:
		m.settle(l, now)
	case l.lost == nil:
		heap.Push(&m.leases, l)
	}
	// A lost lease still holding waits for its holder's decision.
}

// applyAck records the outcome of l's delete. Called with m.mu held.
func (m *Manager) applyAck(l *Lease, err error, now time.Time) {
	switch {
	case err == nil && (l.late || l.lost != nil):
		m.st.lateAcked.Add(1)
		m.finish(l)
		return
	case err == nil:
		m.st.acked.Add(1)
		m.finish(l)
		return
	case !errors.Is(err, sqsloop.ErrAccessDenied) && permanent(err), l.late, l.lost != nil:
		m.st.ackFailed.Add(1)
		level := slog.LevelError
		if errors.Is(err, sqsloop.ErrReceiptHandleExpired) || l.lost != nil {
			level = slog.LevelWarn // the lease was lost: the message will be delivered again
		}
		m.log.Log(context.Background(), level, "visibility: ack failed; the message may be delivered again",
			slog.String("message_id", l.msg.ID), slog.Any("error", err))
		m.finish(l)
		return
	}
	// Transient (or access denied, which may still be propagating): keep
	// the lease alive and try again, looking at it by Interval/2 before its
	// deadline at the latest, as at a holding lease, so that an extension
	// sent then still lands (unless it can no longer be extended, or Run
	// is flushing and extends nothing: then the back-off stands).
	m.st.ackRetries.Add(1)
	l.tries++
	l.due = now.Add(m.retryDelay(l.tries))
	if last := l.deadline.Add(-m.cfg.Interval / 2); !m.cfg.Disabled && !l.capped && !m.flushing && last.Before(l.due) {
		l.due = last
		if l.due.Before(now) {
			l.due = now
		}
	}
	heap.Push(&m.leases, l)
}

// applyNack records the outcome of l's nack or give-back. Called with
// m.mu held.
func (m *Manager) applyNack(l *Lease, err error, now time.Time) {
	switch {
	case err == nil && l.decided == givenUp:
		m.st.givenBack.Add(1)
		m.finish(l)
		return
	case err == nil:
		m.st.nacked.Add(1)
		m.finish(l)
		return
	case errors.Is(err, sqsloop.ErrAccessDenied) || !permanent(err):
		l.tries++
		if retry := now.Add(m.retryDelay(l.tries)); retry.Before(l.deadline) {
			l.due = retry
			heap.Push(&m.leases, l)
			return
		}
	}
	m.st.nackFailed.Add(1)
	m.log.Warn("visibility: nack failed; the message becomes visible when its lease ends",
		slog.String("message_id", l.msg.ID), slog.Any("error", err))
	m.finish(l)
}

// retryDelay is the back-off before the n-th retry of an ack or nack:
// 100 ms doubling, at most Interval/2 and at most 5 s. (An ack still
// failing is also looked at by Interval/2 before its deadline, whatever
// its back-off, so that its lease is extended in time.)
func (m *Manager) retryDelay(n int) time.Duration {
	d := 100 * time.Millisecond
	for i := 1; i < n && d < 5*time.Second; i++ {
		d *= 2
	}
	return max(min(d, m.cfg.Interval/2, 5*time.Second), time.Millisecond)
}

// permanent reports whether err ends an attempt at once rather than being
// tried again: the handle is stale, the ceiling is reached, the request is
// malformed, the caller is denied, or the mailbox or queue is gone.
func permanent(err error) bool {
	for _, target := range []error{sqsloop.ErrReceiptHandleExpired, sqsloop.ErrLeaseCeiling, sqsloop.ErrAccessDenied,
		sqsloop.ErrMailboxClosed, sqsloop.ErrQueueNotFound, sqsloop.ErrInvalidArgument} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// takeLost returns the leases lost since the last call. Called with m.mu
// held.
func (m *Manager) takeLost() []*Lease {
	lost := m.lostNow
	m.lostNow = nil
	return lost
}

// report tells the logger, the hook and the handler that each lease is
// lost. Called without m.mu, on Run's goroutine.
func (m *Manager) report(lost []*Lease) {
	for _, l := range lost {
		m.st.lost.Add(1)
		m.log.Warn("visibility: lease lost; the message may be delivered again",
			slog.String("message_id", l.msg.ID), slog.Int("receive_count", l.msg.ReceiveCount), slog.Any("reason", l.lost))
		if m.cfg.OnLeaseLost != nil {
			m.cfg.OnLeaseLost(l.msg, l.lost)
		}
		if m.cfg.CancelOnLeaseLost && l.cancel != nil {
			l.cancel(l.lost)
		}
	}
}
