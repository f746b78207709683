package visibility

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
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

	deadline time.Time // when the queue makes the message visible unless changed
	lastExt  time.Time // last successful extension, or the receive
	beatSeen time.Time // the beat the last successful extension was earned by, or the receive
	beatNow  time.Time // the heartbeat's last beat at the latest look (alive)
	ceiling  time.Time // receive + the configured ceiling (≤ 12 h)
	due      time.Time // when the Manager looks at this lease next
	capped   bool      // the last extension was clamped to the ceiling
	lastErr  error     // the last extension's transient error, nil after a success

	decided   decision
	delay     time.Duration // nack delay
	tries     int           // failed attempts of the ack or nack
	late      bool          // acked after the lease was lost: one attempt, counted apart
	lost      error         // leaseLost's error once lost
	neverBeat bool          // lost for want of beats, its handler never having beaten
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

// Err returns the error the lease was lost with (it matches ErrLeaseLost
// and its reason with errors.Is), or nil while it holds. A
// lease whose deadline has passed is lost even before the Manager's loop
// notices, unless an extension of it is on the wire: then that call's
// answer decides. Safe for concurrent use.
func (l *Lease) Err() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if l.lost == nil && !l.done && !l.busy && !time.Now().Before(l.deadline) {
		return leaseLost(l.msg.ID, l.endReason())
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
	return ErrLeaseLapsed
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
