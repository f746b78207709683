package producer

import (
	"container/heap"
	"slices"
	"time"

	"github.com/sqsloop/sqsloop"
)

// item is one accepted message. Its fields are guarded by Producer.mu, but
// for size, group and done, set before it is shared, and msg, read without
// it by the call that carries it (onWire), cleared (release) only once it
// is finished.
type item struct {
	msg   sqsloop.OutgoingMessage
	size  int           // msg.Size()
	group string        // ordered message group; "" when not held back
	done  chan struct{} // closed by notify

	res       Result
	err       error
	dead      bool // its outcome is given (done is closed): skipped where met, never sent again
	onWire    bool // in a call under way
	alone     bool // goes in a call of its own (its batch was refused whole as malformed)
	waited    bool // ready again after a wait (behind its group's head, for a retry, a split): goes without a linger
	attempts  int
	readyAt   time.Time   // when it was accepted: its linger counts from then (one that has waited goes at once)
	due       time.Time   // in the retry heap: when it may go again
	stopWatch func() bool // stops the AfterFunc watching ctx
}

// group is a message group whose order is kept: head is its one message
// ready, on the wire or waiting for a retry; the rest wait behind it.
type group struct {
	head    *item
	waiting []*item
}

// queue holds the messages not on the wire: ready to go (in order), waiting
// for a retry, or waiting behind their group's head. Guarded by
// Producer.mu.
type queue struct {
	ready  []*item
	retry  retryHeap
	groups map[string]*group
	shells int // withdrawn messages left in ready or retry since the last compact (at most)
}

// minShells is how many withdrawn messages may stay in the lists, beyond
// as many as are pending, before compact drops them.
const minShells = 64

func newQueue() queue { return queue{groups: map[string]*group{}} }

// add adds a new message, accepted now: ready, unless its group has a head
// already.
func (q *queue) add(it *item, now time.Time) {
	it.readyAt = now
	if it.group != "" {
		if g := q.groups[it.group]; g != nil {
			g.waiting = append(g.waiting, it)
			return
		}
		q.groups[it.group] = &group{head: it}
	}
	q.push(it)
}

// push appends it to the ready list.
func (q *queue) push(it *item) { q.ready = append(q.ready, it) }

// pushFront puts items back at the front of the ready list, in order, to
// go without a linger.
func (q *queue) pushFront(items []*item) {
	front := make([]*item, 0, len(items)+len(q.ready))
	for _, it := range items {
		it.waited = true
		front = append(front, it)
	}
	q.ready = append(front, q.ready...)
}

// pop takes the front of the ready list.
func (q *queue) pop() *item {
	it := q.ready[0]
	q.ready[0] = nil
	q.ready = q.ready[1:]
	return it
}

// dropDead pops withdrawn messages off the front of the ready list.
func (q *queue) dropDead() {
	for len(q.ready) > 0 && q.ready[0].dead {
		q.pop()
	}
}

// maxLingerFactor bounds how long a batch that is not full waits for
// company while calls are on the wire: 10 lingers (50 ms by default).
const maxLingerFactor = 10

// due returns when the batch at the front of the ready list may go (ok is
// false when the list is empty): at once when it is full (10 entries or
// 1 MiB) or holds a message that has waited already (a group's next, a
// retry); else once its oldest message has lingered, and, since messages
// come from senders a call's return frees, while calls are on the wire
// (busy) not before they have all returned and given their senders a
// linger to add theirs (Nagle's rule), but never more than maxLingerFactor
// lingers.
func (q *queue) due(linger time.Duration, busy bool, lastReturn time.Time) (time.Time, bool) {
	q.dropDead()
	if len(q.ready) == 0 {
		return time.Time{}, false
	}
	n, size := 0, 0 // of the live messages
	for _, it := range q.ready {
		switch {
		case it.dead:
			continue
		case it.waited:
			return time.Time{}, true
		}
		n, size = n+1, size+it.size
		if n >= sqsloop.MaxBatchSize || size >= sqsloop.MaxMessageSize {
			return time.Time{}, true
		}
	}
	oldest := q.ready[0] // live: dropDead
	at, limit := oldest.readyAt.Add(linger), oldest.readyAt.Add(maxLingerFactor*linger)
	switch {
	case busy:
		at = limit
	case lastReturn.Add(linger).After(at):
		at = lastReturn.Add(linger)
		if at.After(limit) {
			at = limit
		}
	}
	return at, true
}

// take returns the next batch to send: up to 10 ready messages (one alone,
// if it must go alone) of at most 1 MiB in all, the oldest first; nil when
// none is due (see due), unless flush. With bulk (the Mailbox is a
// sqsloop.BulkSender) and more than one batch ready, it takes up to
// sqsloop.MaxBulkSize messages of sqsloop.MaxBulkBytes in all instead, and
// reports so (many).
func (q *queue) take(now time.Time, linger time.Duration, flush, busy bool, lastReturn time.Time, bulk bool) (batch []*item, many bool) {
	at, ok := q.due(linger, busy, lastReturn)
	if !ok || (!flush && now.Before(at)) {
		return nil, false
	}
	most, mostBytes := sqsloop.MaxBatchSize, sqsloop.MaxMessageSize
	if bulk && q.moreThanABatch() {
		most, mostBytes, many = sqsloop.MaxBulkSize, sqsloop.MaxBulkBytes, true
	}
	size := 0
	for len(q.ready) > 0 && len(batch) < most {
		it := q.ready[0]
		switch {
		case it.dead:
			q.pop()
			continue
		case it.alone:
			if len(batch) == 0 {
				batch = append(batch, q.pop())
				many = false
			}
			return batch, many
		case size+it.size > mostBytes:
			return batch, many // SQS caps a whole batch at 1 MiB (a bulk at 16 MiB): the rest go next
		}
		batch = append(batch, q.pop())
		size += it.size
	}
	return batch, many
}

// moreThanABatch reports whether the live messages at the front of the
// ready list, up to the first that must go alone, are more than one Send
// takes (10 messages, 1 MiB).
func (q *queue) moreThanABatch() bool {
	n, size := 0, 0
	for _, it := range q.ready {
		switch {
		case it.dead:
			continue
		case it.alone:
			return false
		}
		n, size = n+1, size+it.size
		if n > sqsloop.MaxBatchSize || size > sqsloop.MaxMessageSize {
			return true
		}
	}
	return false
}

// dueRetries makes the retries due by now ready, to go at once (those of
// one failed call share their due time, so they go together).
func (q *queue) dueRetries(now time.Time) {
	for len(q.retry) > 0 && !q.retry[0].due.After(now) {
		it := heap.Pop(&q.retry).(*item)
		if !it.dead {
			it.waited = true
			q.push(it)
		}
	}
}

// next returns when take or dueRetries may next have something to do.
func (q *queue) next(linger time.Duration, busy bool, lastReturn time.Time) (time.Time, bool) {
	at, ok := q.due(linger, busy, lastReturn)
	if len(q.retry) > 0 && (!ok || q.retry[0].due.Before(at)) {
		at, ok = q.retry[0].due, true
	}
	return at, ok
}

// advance makes the next live message of it's group ready once it, the
// group's head, is finished; the group is forgotten when none is left.
func (q *queue) advance(it *item) {
	g := q.groups[it.group]
	if g == nil || g.head != it {
		return
	}
	for len(g.waiting) > 0 {
		next := g.waiting[0]
		g.waiting[0] = nil
		g.waiting = g.waiting[1:]
		if !next.dead {
			g.head = next
			next.waited = true // it has waited behind the head: no linger on top
			q.push(next)
			return
		}
	}
	delete(q.groups, it.group)
}

// compact drops the withdrawn messages from the ready list and the retry
// heap (a group's waiting list holds none: see Producer.pause).
func (q *queue) compact() {
	dead := func(it *item) bool { return it.dead }
	q.ready = slices.DeleteFunc(q.ready, dead)
	q.retry = slices.DeleteFunc(q.retry, dead)
	heap.Init(&q.retry)
	q.shells = 0
}

// takeAll removes and returns every live message not on the wire: when
// Close's context has ended.
func (q *queue) takeAll() []*item {
	var all []*item
	for _, it := range q.ready {
		if !it.dead {
			all = append(all, it)
		}
	}
	for _, it := range q.retry {
		if !it.dead {
			all = append(all, it)
		}
	}
	for name, g := range q.groups {
		for _, it := range g.waiting {
			if !it.dead {
				all = append(all, it)
			}
		}
		g.waiting = nil
		if !g.head.onWire {
			delete(q.groups, name)
		}
	}
	q.ready, q.retry = nil, nil
	return all
}

// retryHeap orders messages waiting for a retry by due time.
type retryHeap []*item

func (h retryHeap) Len() int           { return len(h) }
func (h retryHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h retryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *retryHeap) Push(x any)        { *h = append(*h, x.(*item)) }
func (h *retryHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}
