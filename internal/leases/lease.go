package leases

import (
	"context"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// decision is what the holder of a lease decided to do with its message.
type decision uint8

const (
	holding decision = iota // still being handled: extend while alive
	acking                  // delete it (DeleteMessageBatch)
	nacking                 // make it visible after delay (a failed message)
	givenUp                 // make it visible at once (unstarted, or the drain)
)

// Lease is one received message held by a Manager, from Hold until its
// ack, nack or give-back has been sent (or its lease is lost). Its methods
// are safe for concurrent use; its fields are guarded by the Manager's
// mutex and changed only by the Manager.
type Lease struct {
	m      *Manager
	msg    *sqsloop.Message
	hb     *heartbeat.Heartbeat // nil while it waits for its handler (Start)
	cancel context.CancelCauseFunc

	deadline    time.Time     // when the queue makes the message visible unless changed
	lastExt     time.Time     // last successful extension, or the receive
	beatSeen    time.Time     // the beat the last successful extension was earned by, or the receive
	beatNow     time.Time     // the heartbeat's last beat at the latest look (alive)
	ceiling     time.Time     // receive + the configured ceiling (≤ 12 h)
	due         time.Time     // when the Manager looks at this lease next
	capped      bool          // the last extension was clamped to the ceiling
	lastErr     error         // the last extension's transient error, nil after a success
	own         time.Duration // the extension its handler asked for (SetExtension); 0: the Manager's choice
	begin       time.Time     // when its handler started (Begin)
	startEarned bool          // an extension came after its handler started (startUnearned)
	maxGap      time.Duration // the largest gap between beats of its running handler observed
	seen        time.Time     // the latest beat seen at a look since Begin, or Begin's time: where the next gap starts

	decided   decision
	delay     time.Duration // nack delay
	tries     int           // failed attempts of the ack or nack
	late      bool          // acked after the lease was lost: one attempt, counted apart
	lost      error         // leaseLost's error once lost
	neverBeat bool          // lost for want of beats while its handler ran without a beat (rules.NeverBeat)
	begun     bool          // its handler started (Begin)
	returned  bool          // its handler returned (Returned)
	beat0     time.Time     // the heartbeat's last beat when its handler started
	done      bool          // no longer tracked: settled, or abandoned at the end of Run

	seq   uint64 // its place among the leases held: 1, 2, …
	index int    // position in the heap; -1 when not in it
	busy  bool   // a call about this lease is on the wire
}

// Ack decides that the message was processed: the Manager stops
// extending it on beats, deletes it (DeleteMessageBatch, coalesced with
// other acks within 50 ms), and, if the delete fails
// transiently, keeps the lease alive and tries again with back-off until
// the delete succeeds, the receipt handle turns out stale, a permanent
// error ends it, or the lease is lost. A lease already lost is still acked
// once (on a standard queue the newest receipt handle may still delete a
// message nobody received again), counted apart in Stats.LateAcked.
//
// Ack never blocks and never does I/O. Only the first decision about a
// lease (Ack, Nack or GiveBack) counts; later ones, and any after the
// Manager's Run has returned, are ignored. Safe for concurrent use.
func (l *Lease) Ack() { l.m.decide(l, acking, 0) }

// Nack decides that the message failed: the Manager stops extending it
// and makes it visible again after delay (ChangeMessageVisibilityBatch;
// clamped to 0–12 h, rounded up to whole seconds by SQS), retrying a
// transient failure while the lease holds. A lease already lost is not
// nacked: its message is visible, or delivered again, already. Never
// blocks; only the first decision counts. Safe for concurrent use.
func (l *Lease) Nack(delay time.Duration) {
	l.m.decide(l, nacking, min(max(delay, 0), sqsloop.MaxVisibilityTimeout))
}

// GiveBack decides to return the message unprocessed: visibility 0 at
// once, so another receiver can take it (messages received but not
// started, and the drain). Counted in Stats.GivenBack rather than Nacked.
// Never blocks; only the first decision counts. Safe for concurrent use.
func (l *Lease) GiveBack() { l.m.decide(l, givenUp, 0) }

// Start gives a lease held without a heartbeat (waiting for its handler)
// the heartbeat its handler beats: from then on it is extended only on
// beats (heartbeat-gated), as if held with hb. It does nothing to a lease
// held with a heartbeat, or already decided; a nil hb leaves the lease
// waiting. Never blocks; safe for concurrent use.
func (l *Lease) Start(hb *heartbeat.Heartbeat) {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if l.hb == nil && l.decided == holding {
		l.hb = hb
	}
}

// Err returns the error the lease was lost with (it matches
// visibility.ErrLeaseLost and its reason with errors.Is), or nil while it
// holds. A lease whose deadline has passed is lost even before the
// Manager's loop notices, unless an extension of it is on the wire: then
// that call's answer decides. Safe for concurrent use.
func (l *Lease) Err() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	return l.m.lostNow(l, time.Now())
}

// Begin marks the start of the handler's run of the lease's message, once
// Start gave the lease its heartbeat: from now until Returned, a loss for
// want of beats counts as never beaten unless the heartbeat beats after
// this call (rules.NeverBeat; the beats of an earlier message of its FIFO
// group do not count). It returns Err: a lease lost while its message
// waited is not to be run. Safe for concurrent use.
func (l *Lease) Begin() error {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	err := m.lostNow(l, now)
	if err == nil && !l.begun {
		l.begun, l.beat0 = true, l.hb.LastBeat()
		l.begin, l.seen = now, now
	}
	return err
}

// Returned marks the end of the handler's run, before its result is
// decided, and returns the error the lease was lost with by then (as Err)
// and whether that loss counts as never beaten: the answer the lease
// owner's LeaseLost event carries too, decided once. A loss found later is
// no longer the handler's. Safe for concurrent use.
func (l *Lease) Returned() (lost error, neverBeat bool) {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.lostNow(l, time.Now())
	l.returned = true
	return err, err != nil && l.neverBeat
}

// SetExtension makes every later extension of the lease ask for d instead
// of the Manager's choice: a handler that knows how far apart its beats
// come. d must be within MinExtensionPeriod and MaxExtensionPeriod (see
// visibility.Config), else SetExtension changes nothing and returns an
// error naming the range and wrapping sqsloop.ErrInvalidArgument. It takes
// effect at the lease's next extension, which its next beat earns. Safe
// for concurrent use.
func (l *Lease) SetExtension(d time.Duration) error {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	lo, hi := m.ls.Bounds(l.msg.VisibilityTimeout)
	if d < lo || d > hi {
		return fmt.Errorf("visibility: SetExtension: the extension must be between %v and %v (Visibility.MinExtensionPeriod and MaxExtensionPeriod), got %v: %w",
			lo, hi, d, sqsloop.ErrInvalidArgument)
	}
	l.own = d
	return nil
}

// lostNow is Err at now. A holding lease whose deadline has passed is
// marked lost (markLost: its report is queued, and whether it counts as
// never beaten decided, at the moment the loss is first seen, whoever sees
// it); for a decided one the error is only reported. Called with m.mu held.
func (m *Manager) lostNow(l *Lease, now time.Time) error {
	if l.lost == nil && !l.done && !l.busy && !now.Before(l.deadline) {
		if l.decided != holding {
			return leaseLost(l.msg.ID, l.endReason())
		}
		m.markLost(l, l.endReason())
		m.poke()
	}
	return l.lost
}

// endReason is why l's deadline passed without an extension.
func (l *Lease) endReason() error {
	switch {
	case l.capped:
		return sqsloop.ErrLeaseCeiling
	case l.lastErr != nil:
		return l.lastErr
	}
	return visibility.ErrLeaseLapsed
}

// leaseHeap orders leases by due time; it implements container/heap.
type leaseHeap []*Lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *leaseHeap) Push(x any) {
	l := x.(*Lease)
	l.index = len(*h)
	*h = append(*h, l)
}
func (h *leaseHeap) Pop() any {
	old := *h
	n := len(old)
	l := old[n-1]
	old[n-1] = nil
	l.index = -1
	*h = old[:n-1]
	return l
}
