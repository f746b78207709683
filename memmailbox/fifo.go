package memmailbox

import "time"

// group is one FIFO message group: its messages in send order, whether
// visible, delayed or in flight, and how many of them are in flight.
type group struct {
	id       string
	msgs     recList
	inflight int
	ready    bool   // in queueState.ready
	prev     *group // links in queueState.ready
	next     *group
}

// receivable reports whether a receive may take from g: nothing of g is in
// flight and its oldest message is visible.
func (g *group) receivable() bool {
	return g.inflight == 0 && g.msgs.head != nil && g.msgs.head.st == stVisible
}

// groupList is an intrusive FIFO list of the receivable groups, so that
// groups take turns.
type groupList struct {
	head, tail *group
}

func (l *groupList) pushBack(g *group) {
	g.prev, g.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = g
	} else {
		l.head = g
	}
	l.tail = g
	g.ready = true
}

func (l *groupList) remove(g *group) {
	if g.prev != nil {
		g.prev.next = g.next
	} else {
		l.head = g.next
	}
	if g.next != nil {
		g.next.prev = g.prev
	} else {
		l.tail = g.prev
	}
	g.prev, g.next = nil, nil
	g.ready = false
}

func (l *groupList) popFront() *group {
	g := l.head
	if g != nil {
		l.remove(g)
	}
	return g
}

// dedupEntry remembers one deduplication ID of a FIFO queue.
type dedupEntry struct {
	key       string
	messageID string
	seq       string // the message's sequence number
	expires   time.Time
}

// dedupWindow remembers deduplication IDs for deduplicationInterval. Entries
// expire in the order they were added (the interval is constant), so pruning
// pops from the front of a queue and never scans.
type dedupWindow struct {
	byKey map[string]int // key -> sequence number of its entry
	queue []dedupEntry   // entries in order of expiry, from queue[head]
	head  int
	base  int // sequence number of queue[0]
}

// lookup returns the entry of the message sent with key within the
// interval.
func (w *dedupWindow) lookup(key string, now time.Time) (dedupEntry, bool) {
	w.prune(now)
	n, ok := w.byKey[key]
	if !ok {
		return dedupEntry{}, false
	}
	return w.queue[n-w.base], true
}

// add remembers key, the message ID and sequence number sent with it, for
// deduplicationInterval from now.
func (w *dedupWindow) add(key, messageID, seq string, now time.Time) {
	if w.byKey == nil {
		w.byKey = make(map[string]int)
	}
	w.byKey[key] = w.base + len(w.queue)
	w.queue = append(w.queue, dedupEntry{key: key, messageID: messageID, seq: seq, expires: now.Add(deduplicationInterval)})
}

func (w *dedupWindow) prune(now time.Time) {
	for w.head < len(w.queue) && !w.queue[w.head].expires.After(now) {
		delete(w.byKey, w.queue[w.head].key)
		w.queue[w.head] = dedupEntry{}
		w.head++
	}
	// Compact once the expired prefix is at least half the slice.
	if w.head > 0 && w.head*2 >= len(w.queue) {
		n := copy(w.queue, w.queue[w.head:])
		clear(w.queue[n:])
		w.queue = w.queue[:n]
		w.base += w.head
		w.head = 0
	}
}
