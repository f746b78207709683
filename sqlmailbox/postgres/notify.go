package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// notifyWindow is the shortest time between two NOTIFYs of one queue from
// one Store: a NOTIFY takes a lock of the whole server at commit (the
// notifying commits of every session wait for one another's WAL flush)
// and wakes every listening process, so a burst of sends, nacks and FIFO
// acks sends two per window (the first change's, carried by its own
// statement, and one at the window's end for those held back), not one per
// call. A change held back reaches other processes' long polls at most
// this much later: 2 ms, a fifth of what a pickup may take.
const notifyWindow = 2 * time.Millisecond

// A notification's payload is "<queue ID> <messages> <Store>": the queue,
// how many of its messages may have turned visible (so that a listener
// wakes as many long polls as they need, not every one), and the sending
// Store's tag (its own listener leaves its notifications out: the Store
// woke its long polls itself). A payload of the queue ID alone (an older
// sqsloop's) wakes every long poll of the queue.

// newTag returns a Store's tag: 16 random hex digits.
func newTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand.Read crashes the program instead)
	return hex.EncodeToString(b[:])
}

// parsePayload reads a notification's payload: the queue, how many
// messages (-1: unknown) and the sending Store's tag ("" when not given);
// ok is false for a payload that is not one.
func parsePayload(p string) (queueID int64, n int, tag string, ok bool) {
	f := strings.Fields(p)
	if len(f) == 0 {
		return 0, 0, "", false
	}
	id, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, 0, "", false
	}
	if len(f) != 3 {
		return id, -1, "", true
	}
	n, err = strconv.Atoi(f[1])
	if err != nil || n < 1 {
		n = -1
	}
	return id, n, f[2], true
}

// notifier sends the NOTIFYs that wake other processes' long polls, at
// most one per queue per window, never dropping one: lead lets the first
// change of a window carry it in its own statement (sent at its commit),
// follow sends one at the window's end for the changes that committed
// without one, counting their messages (River's notifylimiter drops them;
// here a long poll would then wait for its poll interval). Safe for
// concurrent use; close stops it, sending what it still holds.
type notifier struct {
	exec   func(ctx context.Context, payload string) error // sends one NOTIFY
	window time.Duration
	tag    string // this Store's, in every payload

	mu     sync.Mutex
	last   map[int64]time.Time // queue ID → when its last NOTIFY was let go
	held   map[int64]*held     // queue ID → the NOTIFY held for the window's end
	closed bool
	wg     sync.WaitGroup // timers' sends
}

// held is a NOTIFY held for the end of a window: its timer, and the
// messages of the changes it stands for.
type held struct {
	timer *time.Timer
	n     int
}

func newNotifier(exec func(ctx context.Context, payload string) error, window time.Duration, tag string) *notifier {
	return &notifier{exec: exec, window: window, tag: tag, last: map[int64]time.Time{}, held: map[int64]*held{}}
}

// payload is the payload of a NOTIFY of n messages of the queue from this
// Store.
func (n *notifier) payload(queueID int64, msgs int) string {
	return fmt.Sprintf("%d %d %s", queueID, max(msgs, 1), n.tag)
}

// lead returns the payload a change of the queue about to be made, of
// msgs messages, carries in its own statement, when none was let go within
// the window (it is then counted as let go now); nil otherwise: the caller
// then calls follow once its change has committed.
func (n *notifier) lead(queueID int64, msgs int) *string {
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	if last, ok := n.last[queueID]; ok && now.Sub(last) < n.window {
		return nil
	}
	n.last[queueID] = now
	p := n.payload(queueID, msgs)
	return &p
}

// follow makes sure a NOTIFY of the queue is sent after now, for a change
// of msgs messages that committed without one: at the end of the window,
// together with the others held for then.
func (n *notifier) follow(queueID int64, msgs int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	if h := n.held[queueID]; h != nil {
		h.n += msgs
		return
	}
	h := &held{n: msgs}
	n.held[queueID] = h
	n.wg.Add(1)
	h.timer = time.AfterFunc(max(n.window-time.Since(n.last[queueID]), 0), func() {
		defer n.wg.Done()
		n.mu.Lock()
		delete(n.held, queueID)
		n.last[queueID] = time.Now()
		msgs := h.n
		n.mu.Unlock()
		n.send(queueID, msgs)
	})
}

// notify wakes the queue's listeners for a change of msgs messages that
// has committed and that no statement carried a NOTIFY for: at once when
// the window allows, else at its end. It returns the NOTIFY's error.
func (n *notifier) notify(ctx context.Context, queueID int64, msgs int) error {
	p := n.lead(queueID, msgs)
	if p == nil {
		n.follow(queueID, msgs)
		return nil
	}
	return n.exec(ctx, *p)
}

// send sends a held NOTIFY. A failure is not reported: the listeners' long
// polls look again within their poll interval.
func (n *notifier) send(queueID int64, msgs int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.exec(ctx, n.payload(queueID, msgs))
}

// close sends the NOTIFYs still held, at once, and waits for every send;
// follow does nothing after it.
func (n *notifier) close() {
	n.mu.Lock()
	n.closed = true
	type due struct {
		queueID int64
		msgs    int
	}
	var sends []due
	for id, h := range n.held {
		if h.timer.Stop() {
			sends = append(sends, due{id, h.n})
			n.wg.Done()
		}
	}
	clear(n.held)
	n.mu.Unlock()
	for _, s := range sends {
		n.send(s.queueID, s.msgs)
	}
	n.wg.Wait()
}
