package sqlmailbox

import "sync"

// hub wakes the long polls of this process that wait on a queue when
// messages of that queue may have turned visible: sent, nacked, moved to it
// as dead letters, freed by a FIFO delete (by this Store), or announced by
// the database (a Notifier). It wakes as many as the messages need, not
// every one: a send of n messages wakes long polls whose receives take n
// together (the oldest waiting first), so that one message does not send
// 32 receives to the database of which one finds it (a thundering herd).
// A long poll woken that leaves without having looked since (its own
// receive returned first, its context ended) passes its wake-up on; one
// woken for messages another receive took finds nothing and waits again.
// Safe for concurrent use; the zero value is ready.
type hub struct {
	mu     sync.Mutex
	queues map[int64][]*waiter // queue ID → its long polls, oldest first
}

// waiter is one long poll of a queue, from its first look to its return.
// Its fields but ch are guarded by hub.mu.
type waiter struct {
	queueID int64
	want    int           // messages its receive takes (1–10)
	ch      chan struct{} // buffered 1: a wake-up
	woken   bool          // woken since its last look began
	waiting bool          // between looks, waiting on ch
}

// all is the count of a wake-up that wakes every long poll of the queue:
// how many messages turned visible is not known.
const all = -1

// join registers a long poll of the queue whose receive takes want
// messages. Call it before the first look at the database, so that a
// wake-up between a look and the wait is not missed, and leave when the
// long poll returns.
func (h *hub) join(queueID int64, want int) *waiter {
	w := &waiter{queueID: queueID, want: want, ch: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.queues == nil {
		h.queues = make(map[int64][]*waiter)
	}
	h.queues[queueID] = append(h.queues[queueID], w)
	return w
}

// look marks the start of w's next look at the database: a wake-up before
// it is answered by that look.
func (h *hub) look(w *waiter) {
	h.mu.Lock()
	w.woken, w.waiting = false, false
	h.mu.Unlock()
	select {
	case <-w.ch:
	default:
	}
}

// wait marks w waiting for a wake-up (on w.ch).
func (h *hub) wait(w *waiter) {
	h.mu.Lock()
	w.waiting = true
	h.mu.Unlock()
}

// leave unregisters w. A wake-up it got and did not look after goes to the
// next long poll: the messages it was woken for may still be visible.
func (h *hub) leave(w *waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ws := h.queues[w.queueID]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(h.queues, w.queueID)
	} else {
		h.queues[w.queueID] = ws
	}
	if w.woken {
		h.wakeLocked(w.queueID, w.want)
	}
}

// oldest reports whether w is the oldest long poll of its queue.
func (h *hub) oldest(w *waiter) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ws := h.queues[w.queueID]
	return len(ws) > 0 && ws[0] == w
}

// wake wakes long polls of the queue whose receives take n messages
// together (every one for n = all): those waiting first, then those
// looking (whose look may have begun before the messages were there), the
// oldest first, skipping those woken already.
func (h *hub) wake(queueID int64, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wakeLocked(queueID, n)
}

func (h *hub) wakeLocked(queueID int64, n int) {
	ws := h.queues[queueID]
	for _, waiting := range [2]bool{true, false} {
		for _, w := range ws {
			if n == 0 {
				return
			}
			if w.woken || w.waiting != waiting {
				continue
			}
			w.woken = true
			select {
			case w.ch <- struct{}{}:
			default:
			}
			if n != all {
				n = max(n-w.want, 0)
			}
		}
	}
}

// wakeAll wakes every long poll of every queue: the notifier was down, so
// a wake-up may have been missed.
func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := range h.queues {
		h.wakeLocked(id, all)
	}
}
