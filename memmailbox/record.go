package memmailbox

import (
	"time"

	"github.com/sqsloop/sqsloop"
)

// msgState is where a record is.
type msgState uint8

const (
	stNew      msgState = iota // being enqueued
	stVisible                  // receivable (standard: in queueState.visible)
	stInflight                 // received, in queueState.inflight until due
	stDelayed                  // sent with a delay, in queueState.delayed until due
	stGone                     // deleted or moved to the DLQ
)

// record is one message stored in a queue. All fields are guarded by the
// owning queueState's mutex.
type record struct {
	id       string
	body     string
	attrs    map[string]sqsloop.MessageAttribute // owned: never handed out
	sentAt   time.Time
	firstRcv time.Time
	count    int    // approximate receive count
	group    string // message group: FIFO, or fair queue (standard, optional)
	dedupID  string // FIFO deduplication ID
	order    uint64 // send order within its queue: ties between equal times go to the older
	seq      string // FIFO sequence number: order, formatted

	st         msgState
	handle     string    // receipt handle of the newest receive, "" if never received
	receivedAt time.Time // when the newest receive happened
	due        time.Time // in flight: visibility deadline; delayed: when it turns visible; visible: when it turned visible
	hidx       int       // index in the heap it is in

	prev, next *record // links in queueState.visible (standard) or group.msgs (FIFO)
	g          *group  // FIFO: its message group
}

// recList is an intrusive doubly linked list of records, in order.
type recList struct {
	head, tail *record
	n          int
}

func (l *recList) pushBack(r *record) {
	r.prev, r.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = r
	} else {
		l.head = r
	}
	l.tail = r
	l.n++
}

// insertByDue puts r in l, which is in order of due then send order, at its
// place in that order, looking for it from the back: a message turns
// visible now (a send, a nack) or, swept a moment late, at a deadline
// shortly before, so the place is at or near the back.
func (l *recList) insertByDue(r *record) {
	p := l.tail
	for p != nil && (r.due.Before(p.due) || (r.due.Equal(p.due) && r.order < p.order)) {
		p = p.prev
	}
	if p == nil {
		r.prev, r.next = nil, l.head
		if l.head != nil {
			l.head.prev = r
		} else {
			l.tail = r
		}
		l.head = r
		l.n++
		return
	}
	r.prev, r.next = p, p.next
	if p.next != nil {
		p.next.prev = r
	} else {
		l.tail = r
	}
	p.next = r
	l.n++
}

func (l *recList) remove(r *record) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		l.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		l.tail = r.prev
	}
	r.prev, r.next = nil, nil
	l.n--
}

// timeHeap is a min-heap of records keyed by record.due, then record.order
// (so equal times come out in send order); record.hidx tracks each record's
// index so that remove and fix are O(log n).
type timeHeap []*record

func (h timeHeap) peek() *record {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}

// push adds r and reports whether r became the earliest.
func (h *timeHeap) push(r *record) bool {
	r.hidx = len(*h)
	*h = append(*h, r)
	siftUp(*h, r.hidx)
	return r.hidx == 0
}

func (h *timeHeap) pop() *record {
	r := (*h)[0]
	h.remove(r)
	return r
}

func (h *timeHeap) remove(r *record) {
	old := *h
	i, last := r.hidx, len(old)-1
	if i != last {
		old.swap(i, last)
	}
	old[last] = nil
	*h = old[:last]
	if i != last {
		h.fix(i)
	}
	r.hidx = -1
}

// fix restores the heap after the due time of the record at i changed.
func (h timeHeap) fix(i int) {
	if !siftDown(h, len(h), i) {
		siftUp(h, i)
	}
}

func (h timeHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	return a.due.Before(b.due) || (a.due.Equal(b.due) && a.order < b.order)
}

func (h timeHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = i, j
}
