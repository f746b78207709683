package sqlmailbox

import "sync"

// hub wakes the long polls of this process that wait on a queue when a
// message of that queue may have turned visible: sent, nacked, moved to it
// as a dead letter (by this Store), or announced by the database (a
// Notifier). Safe for concurrent use; the zero value is ready.
type hub struct {
	mu    sync.Mutex
	chans map[int64]chan struct{} // queue ID → closed at the next wake-up
}

// watch returns a channel that is closed at the next wake-up of the queue.
// Take it before looking at the database, so that a wake-up between the
// look and the wait is not missed.
func (h *hub) watch(queueID int64) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.chans == nil {
		h.chans = make(map[int64]chan struct{})
	}
	ch, ok := h.chans[queueID]
	if !ok {
		ch = make(chan struct{})
		h.chans[queueID] = ch
	}
	return ch
}

// wake wakes every long poll watching the queue.
func (h *hub) wake(queueID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.chans[queueID]; ok {
		close(ch)
		delete(h.chans, queueID)
	}
}

// wakeAll wakes every long poll of every queue: the notifier was down, so
// a wake-up may have been missed.
func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, ch := range h.chans {
		close(ch)
		delete(h.chans, id)
	}
}
