package leases

import (
	"context"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
)

// lateMargin is the least time an extension should have left before the
// lease's deadline when it is sent: a quarter of Interval, half of what
// the last look (Interval/2 before the deadline) leaves. An extension
// sent with less is late: reported to the observer
// (sqsloop.SettleEntry.Late), it tells of a Manager starved of CPU or of
// sender goroutines, or of calls failing until the last look.
func (m *Manager) lateMargin() time.Duration { return m.cfg.Interval / 4 }

// observe reports the call c, made at start and answered after took with
// the call's error err (nil when it returned per-entry results): a DEBUG
// record per extension batch, and the observer's event. It runs on the
// sender goroutine that made the call, without m.mu: c's leases are in c
// alone, so their message, decision (for a nack or give-back) and deadline
// (for an extension) do not change until c's outcome is applied.
func (m *Manager) observe(c *call, start time.Time, took time.Duration, err error) {
	failed, late := 0, 0
	for i, l := range c.leases {
		e := sqsloop.SettleEntry{Message: l.msg, Err: redact(c.errs[i], l.msg.ReceiptHandle)}
		switch c.kind {
		case extendCall:
			e.Kind, e.Timeout = sqsloop.KindExtend, c.timeouts[i]
			e.Left = l.deadline.Sub(start)
			e.Late = e.Left < m.lateMargin()
		case deleteCall:
			e.Kind = sqsloop.KindAck
		default:
			e.Kind, e.Timeout = sqsloop.KindNack, c.timeouts[i]
			if l.decided == givenUp {
				e.Kind = sqsloop.KindGiveBack
			}
		}
		if e.Err != nil {
			failed++
		}
		if e.Late {
			late++
		}
		c.entries[i] = e
	}
	if c.kind == extendCall && m.log.Enabled(context.Background(), slog.LevelDebug) {
		m.log.LogAttrs(context.Background(), slog.LevelDebug, "visibility: extension batch",
			slog.Int("entries", len(c.leases)), slog.Int("failed", failed), slog.Int("late", late),
			duration("extension", c.timeouts[0]), duration("took", took))
	}
	if m.obs == nil {
		return
	}
	op := sqsloop.OpChangeVisibility
	if c.kind == deleteCall {
		op = sqsloop.OpDelete
	}
	ext, gap := m.ls.Choice(c.leases[0].msg.VisibilityTimeout)
	m.obs.Settled(sqsloop.SettleEvent{
		Op: op, Start: start, Duration: took, Entries: c.entries[:len(c.leases)],
		Failed: failed, Err: err, Held: int(m.st.held.Load()), Extension: ext, BeatGap: gap,
	})
}

// Held returns how many leases the Manager holds now (Stats.Held). Safe
// for concurrent use.
func (m *Manager) Held() int { return int(m.st.held.Load()) }
