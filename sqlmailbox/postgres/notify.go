package postgres

import (
	"context"
	"sync"
	"time"
)

// notifyWindow is the shortest time between two NOTIFYs of one queue from
// one Store: a NOTIFY takes a lock of the whole server at commit and wakes
// every listening process, so a burst of sends, nacks and FIFO acks sends
// two per window (the first change's, carried by its own statement, and one
// at the window's end for those held back), not one per call. A change held
// back reaches other processes' long polls at most this much later.
const notifyWindow = 10 * time.Millisecond

// notifier sends the NOTIFYs that wake other processes' long polls, at
// most one per queue per window, never dropping one: lead lets the first
// change of a window carry it in its own statement (sent at its commit),
// follow sends one at the window's end for the changes that committed
// without one (River's notifylimiter drops them; here a long poll would
// then wait for its poll interval). Safe for concurrent use; close stops
// it, sending what it still holds.
type notifier struct {
	exec   func(ctx context.Context, queueID int64) error // sends one NOTIFY
	window time.Duration

	mu     sync.Mutex
	last   map[int64]time.Time   // queue ID → when its last NOTIFY was let go
	timers map[int64]*time.Timer // queue ID → the NOTIFY held for the window's end
	closed bool
	wg     sync.WaitGroup // timers' sends
}

func newNotifier(exec func(ctx context.Context, queueID int64) error, window time.Duration) *notifier {
	return &notifier{exec: exec, window: window, last: map[int64]time.Time{}, timers: map[int64]*time.Timer{}}
}

// lead reports whether a change of the queue about to be made should carry
// the NOTIFY in its own statement: true when none was let go within the
// window (it is then counted as let go now). A caller told false calls
// follow once its change has committed.
func (n *notifier) lead(queueID int64) bool {
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	if last, ok := n.last[queueID]; ok && now.Sub(last) < n.window {
		return false
	}
	n.last[queueID] = now
	return true
}

// follow makes sure a NOTIFY of the queue is sent after now, for a change
// that committed without one: at the end of the window, unless one is
// already held for then (it is sent after this commit too).
func (n *notifier) follow(queueID int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || n.timers[queueID] != nil {
		return
	}
	n.wg.Add(1)
	n.timers[queueID] = time.AfterFunc(max(n.window-time.Since(n.last[queueID]), 0), func() {
		defer n.wg.Done()
		n.mu.Lock()
		delete(n.timers, queueID)
		n.last[queueID] = time.Now()
		n.mu.Unlock()
		n.send(queueID)
	})
}

// notify wakes the queue's listeners for a change that has committed and
// that no statement carried a NOTIFY for: at once when the window allows,
// else at its end. It returns the NOTIFY's error.
func (n *notifier) notify(ctx context.Context, queueID int64) error {
	if !n.lead(queueID) {
		n.follow(queueID)
		return nil
	}
	return n.exec(ctx, queueID)
}

// send sends a held NOTIFY. A failure is not reported: the listeners' long
// polls look again within their poll interval.
func (n *notifier) send(queueID int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.exec(ctx, queueID)
}

// close sends the NOTIFYs still held, at once, and waits for every send;
// follow does nothing after it.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	var held []int64
	for id, t := range n.timers {
		if t.Stop() {
			held = append(held, id)
			n.wg.Done()
		}
	}
	clear(n.timers)
	n.mu.Unlock()
	for _, id := range held {
		n.send(id)
	}
	n.wg.Wait()
}
