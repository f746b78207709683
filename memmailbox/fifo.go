package memmailbox

import "time"

// group is one FIFO message group: its messages in send order, whether
// visible, delayed or in flight, and how many of them are in flight.
type group struct {
	id       string
	msgs     recList
	inflight int
	ready    bool // in queueState.ready
	ridx     int  // index in queueState.ready
}

// receivable reports whether a receive may take from g: nothing of g is in
// flight and its oldest message is visible.
func (g *group) receivable() bool {
	return g.inflight == 0 && g.msgs.head != nil && g.msgs.head.st == stVisible
}

// groupHeap is a min-heap of the receivable groups keyed by the send order
// of their oldest message, so that a receive takes the oldest group first
// and as many of its messages as it can before the next (SQS's FIFO
// delivery logic: "as many messages with the same message group ID as
// possible"). A receivable group's oldest message is visible and stays its
// oldest while the group is in the heap: nothing but a receive, which takes
// the group out first, removes a visible message of a FIFO queue.
type groupHeap []*group

func (h *groupHeap) push(g *group) {
	g.ridx, g.ready = len(*h), true
	*h = append(*h, g)
	siftUp(*h, g.ridx)
}

// pop removes and returns the oldest group, nil when there is none.
func (h *groupHeap) pop() *group {
	if len(*h) == 0 {
		return nil
	}
	g := (*h)[0]
	h.remove(g)
	return g
}

func (h *groupHeap) remove(g *group) {
	old := *h
	i, last := g.ridx, len(old)-1
	if i != last {
		old.swap(i, last)
	}
	old[last] = nil
	*h = old[:last]
	if i != last && !siftDown(*h, len(*h), i) {
		siftUp(*h, i)
	}
	g.ridx, g.ready = -1, false
}

func (h groupHeap) less(i, j int) bool { return h[i].msgs.head.order < h[j].msgs.head.order }

func (h groupHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].ridx, h[j].ridx = i, j
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
