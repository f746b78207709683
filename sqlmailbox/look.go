package sqlmailbox

import (
	"sync"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// How a Store's receives look at a queue, written once here for every
// driver (one that keeps no positions ignores them):
//
//   - From a second before where the last receive of the Store began to
//     take (driver.Position: a visibility deadline and a row key): a
//     message before that place was visible and not taken only if another
//     transaction held it then, and every way a message turns visible
//     later puts it after that place (a send, a nack, a lease ending: the
//     server's clock only moves on), but for a transaction still in
//     progress, whose deadline is its statement's start: a send that
//     commits more than a second after its statement began lands before
//     the place. So a receive skips the index entries of what was taken,
//     acked or is in flight before it, which an old snapshot (a
//     transaction left idle, a long report) keeps alive and every receive
//     would otherwise step over one by one.
//   - Whole at least every fullLookEvery per queue, or every fullLookCost
//     times as long as the last whole look took when that is longer, and
//     fullLookMax at most (the oldest long poll of the queue waits no
//     longer than that, so that one looks), after a receive of the Store
//     failed (the messages it held are visible again where they were),
//     and as the last look of a long poll before it answers empty (long
//     polling never answers empty while a message is visible): what
//     another transaction held and gave back without taking it (a receive
//     that failed in another process, a sweep), or a send that took more
//     than a second to commit, is found within a second, or within
//     fullLookMax while old snapshots make whole looks slow. A whole look
//     steps over every dead index entry an old snapshot keeps (a
//     REPEATABLE READ report of 20 minutes pins about two million at 800
//     jobs/s); spaced so, it takes about 1 % of the database's time
//     however long the snapshot lasts.
//   - When a receive took nothing, the next visibility deadline (when to
//     look again unless woken) is asked of the database at most every
//     nextFor per queue, and lowered meanwhile by this Store's own sends
//     with a delay, leases and visibility changes; a deadline set by
//     another process is seen within nextFor.
//   - When visible messages were all held by other receives (Busy), the
//     receive waits for a wake-up, or busyWait at most: by then those
//     receives have taken them, or given them up; its next look asks for
//     the next visibility deadline, which may be one of their leases.
const (
	lookBack      = time.Second
	fullLookEvery = time.Second
	fullLookCost  = 100
	fullLookMax   = 30 * time.Second
	nextFor       = 250 * time.Millisecond
	busyWait      = 100 * time.Millisecond
)

// looks holds, per queue, what a Store's receives know of where to look
// and when. Safe for concurrent use; the zero value is ready.
type looks struct {
	mu sync.Mutex
	qs map[int64]*queueLooks
}

type queueLooks struct {
	from   driver.Position // where the last receive began to take
	fullAt time.Time       // when the last whole look began
	full   time.Duration   // how long the last whole look took
	next   time.Time       // the next visibility deadline known (zero: none hidden)
	nextAt time.Time       // when next was asked of the database (zero: never)
}

func (l *looks) queue(id int64) *queueLooks {
	if l.qs == nil {
		l.qs = make(map[int64]*queueLooks)
	}
	q := l.qs[id]
	if q == nil {
		q = &queueLooks{}
		l.qs[id] = q
	}
	return q
}

// plan returns where a receive of the queue starting now looks from (zero:
// the whole queue; always so for the last look of a long poll), and
// whether it asks for the next visibility deadline should it take nothing
// (always after a look that found the visible messages held by others:
// the leases they were given are then known).
func (l *looks) plan(queueID int64, now time.Time, last, afterBusy bool) (from driver.Position, next bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queue(queueID)
	if last || now.Sub(q.fullAt) >= q.fullEvery() {
		q.fullAt = now
	} else {
		from = q.from
	}
	if afterBusy || q.nextAt.IsZero() || now.Sub(q.nextAt) >= nextFor || (!q.next.IsZero() && !q.next.After(now)) {
		q.nextAt, next = now, true
	}
	return from, next
}

// fullEvery is how long after a whole look the next is due.
func (q *queueLooks) fullEvery() time.Duration {
	return min(max(fullLookEvery, fullLookCost*q.full), fullLookMax)
}

// lookedWhole records that a whole look of the queue took d.
func (l *looks) lookedWhole(queueID int64, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue(queueID).full = d
}

// took records where a receive began to take (zero: it took nothing, or
// its driver keeps no positions): the next receives look from lookBack
// before it.
func (l *looks) took(queueID int64, from driver.Position) {
	if from.IsZero() {
		return
	}
	from.At = from.At.Add(-lookBack)
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queue(queueID)
	if q.from.Before(from) {
		q.from = from
	}
}

// failed records that a receive failed: the messages it held may be
// visible again where they were, before where the receives look from.
func (l *looks) failed(queueID int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue(queueID).fullAt = time.Time{}
}

// learned records the next visibility deadline a receive was told.
func (l *looks) learned(queueID int64, next time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue(queueID).next = next
}

// sooner records that a message of the queue turns visible at t (a send
// with a delay, a lease, a visibility change, by this Store).
func (l *looks) sooner(queueID int64, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queue(queueID)
	if q.next.IsZero() || t.Before(q.next) {
		q.next = t
	}
}

// fullDue returns when the next whole look of the queue is due.
func (l *looks) fullDue(queueID int64) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queue(queueID)
	return q.fullAt.Add(q.fullEvery())
}

// nextVisible returns the next visibility deadline known (zero: none).
func (l *looks) nextVisible(queueID int64) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queue(queueID).next
}
