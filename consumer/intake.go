package consumer

import (
	"context"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
)

// maxAhead bounds the receive-ahead depth: the messages the consumer may
// ask for beyond its free handler slots. 320 is what its receive loops can
// have on the wire at once (maxReceivers calls of 10). The depth is also
// capped by the concurrency: at most aheadPerSlot messages per handler slot.
const maxAhead = maxReceivers * sqsloop.MaxBatchSize

// aheadPerSlot caps the receive-ahead depth by the concurrency: two
// receives' worth per handler slot (20).
const aheadPerSlot = 2 * sqsloop.MaxBatchSize

// intake decides how many messages the consumer may ask for. Every message
// holds one unit from the moment a receive asks for it until its handler
// finishes (or it is given back): asked for and on the wire, received and
// waiting for a handler, or running. At most slots + ahead units are held.
//
// ahead is the receive-ahead depth, sized by Little's law from what is
// measured: the messages the handlers get through during one receive round
// trip, slots × round trip / handler time, rounded down, at most maxAhead
// and at most aheadPerSlot × slots.
// Until both are measured, and whenever handlers are slow next to a round
// trip (16 handlers of 5 s jobs with a 10 ms round trip: 16 × 0.01 / 5 =
// 0.03, so 0), it is 0: the consumer then asks only for free slots, so a
// long job never waits in this consumer's buffer while another consumer has
// a free slot. With fast handlers the receives in flight carry what the
// handlers will need by the time they come back; messages seldom wait.
//
// A channel of tokens (or semaphore.Weighted) would not do: the limit
// changes as ahead does, and gather waits for room, a timer and a context
// at once. Safe for concurrent use.
type intake struct {
	slots    int // handler slots: Config.Concurrency
	parkRoom int // units of messages waiting for a limit held beside slots + ahead (gate.go): maxAhead with limits, else 0

	mu     sync.Mutex
	held   int           // units held
	parked int           // of those, units of messages waiting for a limit
	ahead  int           // receive-ahead depth
	room   chan struct{} // capacity 1: signalled when held drops or ahead grows

	handlerTime time.Duration // cautious moving average of a handler run, 0 until measured
	runs        int           // handler runs measured, up to slots
	roundTrip   time.Duration // moving average of a full receive's round trip, 0 until measured

	shares []share // a consumer of several queues (NewQueues): each queue's; nil for one
}

// share is one queue's part of the units, for a consumer of several
// queues: the units are split by weight among the queues whose receives
// come back full ("full"), each taking at most its quota, ⌈limit × weight
// ÷ the full queues' weights⌉ (the total bounded by the limit). A queue
// whose receive came back short has run dry for now: it polls without
// holding units (one receive at a time, "over"), so that its long poll
// keeps no handler from the others, and what that poll brings is admitted
// beyond the limit (at most a batch), the queue full again. The units a
// queue holds are its messages asked for, waiting and running: as handler
// slots follow units, each queue's handler time follows its weight while
// all are full, whatever its jobs take.
type share struct {
	weight int
	held   int           // units of this queue's
	full   bool          // its latest receive came back full (so none has, at first)
	poll   bool          // a receive holding no units is on the wire
	room   chan struct{} // capacity 1: signalled when its quota or the free units may have grown
}

// share splits the units among qs by weight (NewQueues).
func (in *intake) share(qs []*queue) {
	in.shares = make([]share, len(qs))
	for i, q := range qs {
		in.shares[i] = share{weight: q.weight, room: make(chan struct{}, 1)} // not full until a receive says so
	}
}

func newIntake(slots int) *intake {
	return &intake{slots: slots, room: make(chan struct{}, 1)}
}

// limit is how many units may be held. Called with in.mu held.
func (in *intake) limit() int { return in.slots + in.ahead + min(in.parked, in.parkRoom) }

// take takes up to max units of queue q if there is room, and returns how
// many; over reports a receive that holds none (a queue run dry: see
// share), of n messages at most, granted only to a receive's first take
// (first), one at a time.
func (in *intake) take(q, max int, first bool) (n int, over bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	free := in.limit() - in.held
	if in.shares != nil {
		sh := &in.shares[q]
		if !sh.full {
			if sh.poll || !first {
				return 0, false
			}
			sh.poll = true
			return min(max, in.quota(q)), true
		}
		free = min(free, in.quota(q)-sh.held)
		if n = min(max, free); n > 0 {
			sh.held += n
		}
	} else {
		n = min(max, free)
	}
	if n <= 0 {
		return 0, false
	}
	in.held += n
	return n, false
}

// quota is queue q's quota of units (see share), as if it were full.
// Called with in.mu held.
func (in *intake) quota(q int) int {
	w := 0
	for i, sh := range in.shares {
		if sh.full || i == q {
			w += sh.weight
		}
	}
	lim := in.limit()
	return max((lim*in.shares[q].weight+w-1)/w, 1)
}

// release gives back n units of queue q.
func (in *intake) release(q, n int) {
	if n <= 0 {
		return
	}
	in.mu.Lock()
	in.held -= n
	if in.shares != nil {
		in.shares[q].held -= n
	}
	in.mu.Unlock()
	in.signal()
}

// landed follows a receive of queue q that asked for asked messages and
// got got: the units of those it did not get are given back (or, for a
// receive that held none, over, those it got are taken beyond the limit),
// and, with several queues, whether the queue is full is recorded.
func (in *intake) landed(q, asked, got int, over bool) {
	if in.shares == nil {
		in.release(q, asked-got)
		return
	}
	in.mu.Lock()
	sh := &in.shares[q]
	if over {
		sh.poll = false
		in.held += got
		sh.held += got
		sh.full = got > 0
	} else {
		in.held -= asked - got
		sh.held -= asked - got
		sh.full = got == asked
	}
	in.mu.Unlock()
	in.signal()
}

// waitCheck watches a receive of queue q holding n units, with several
// queues: a receive not back within d (twice the measured round trip) is
// waiting in its long poll, so the queue has nothing for now; its units go
// to the other queues, and it lands as one that held none (over). It
// returns the receive's stop, which reports whether that happened. For one
// queue, or a receive holding no units, it does nothing.
func (in *intake) waitCheck(q, n int, over bool, d time.Duration) (stop func() (over bool)) {
	if in.shares == nil || over {
		return func() bool { return over }
	}
	var done, fired bool
	t := time.AfterFunc(d, func() {
		in.mu.Lock()
		if !done {
			fired = true
			sh := &in.shares[q]
			in.held -= n
			sh.held -= n
			sh.full, sh.poll = false, true
		}
		in.mu.Unlock()
		if fired {
			in.signal()
		}
	})
	return func() bool {
		t.Stop()
		in.mu.Lock()
		defer in.mu.Unlock()
		done = true
		return fired
	}
}

// signal tells the gathering loops that there may be room: every queue's,
// with several (a queue run dry grows the others' quotas).
func (in *intake) signal() {
	if in.shares == nil {
		wake(in.room)
		return
	}
	for i := range in.shares {
		wake(in.shares[i].room)
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// park records that n units (negative: -n) of held messages started
// (stopped) waiting for a limit: up to parkRoom of them are held beside
// slots + ahead, so that the handler slots stay free for other work.
func (in *intake) park(n int) {
	in.mu.Lock()
	in.parked += n
	in.mu.Unlock()
	if n > 0 {
		in.signal()
	}
}

// handled records that a handler ran for d.
func (in *intake) handled(d time.Duration) {
	in.mu.Lock()
	in.handlerTime = cautious(in.handlerTime, d)
	in.runs = min(in.runs+1, in.slots)
	grew := in.resize()
	in.mu.Unlock()
	if grew {
		in.signal()
	}
}

// received records a receive that asked for asked messages, got got, and
// took d. Only a receive that came back full measures the round trip: one
// that came back short may have waited in its long poll.
func (in *intake) received(asked, got int, d time.Duration) {
	if got < asked || got == 0 {
		return
	}
	in.mu.Lock()
	in.roundTrip = average(in.roundTrip, d)
	grew := in.resize()
	in.mu.Unlock()
	if grew {
		in.signal()
	}
}

// resize sets ahead from the averages and reports whether it grew. It
// trusts the handler time only once a full round of slots has been
// measured (the first runs may be the quick failures of a queue of long
// jobs), and at most doubles ahead at a time, starting from slots (a wrong
// estimate pulls in a round too many before the next measurement corrects
// it, not maxAhead at once); it shrinks at once. Called with in.mu held.
func (in *intake) resize() bool {
	ahead := 0
	if in.runs >= in.slots && in.roundTrip > 0 {
		depth := float64(in.slots) * float64(in.roundTrip) / float64(in.handlerTime)
		ahead = int(min(depth, maxAhead, float64(aheadPerSlot*in.slots), float64(max(2*in.ahead, in.slots))))
	}
	grew := ahead > in.ahead
	in.ahead = ahead
	return grew
}

// batch is the most one receive of queue q may ask for now: 10, or the
// intake's limit (the queue's quota, with several) when that is lower (a
// single handler slot has nothing to wait for).
func (in *intake) batch(q int) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.shares != nil {
		return min(sqsloop.MaxBatchSize, in.quota(q))
	}
	return min(sqsloop.MaxBatchSize, in.slots+in.ahead)
}

// rtt returns the measured round trip of a full receive, 0 until measured.
func (in *intake) rtt() time.Duration {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.roundTrip
}

// runTime returns the moving average of a handler's run (see cautious), 0
// until one has run.
func (in *intake) runTime() time.Duration {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.handlerTime
}

// depth returns the receive-ahead depth now.
func (in *intake) depth() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.ahead
}

// cautious folds a handler's run time x into the moving average avg so
// that it rises fast (weight 1/2) and falls slowly (weight 1/32): a few
// quick runs among long ones (a job that fails at once, a tiny file) must
// not open the receive-ahead for messages that would then wait behind the
// long ones, losing their leases. The first sample is the average.
func cautious(avg, x time.Duration) time.Duration {
	switch {
	case avg == 0:
		return max(x, 1)
	case x > avg:
		return avg + (x-avg)/2
	}
	return max(avg+(x-avg)/32, 1)
}

// average folds x into the moving average avg (weight 1/8, as TCP's
// smoothed round trip); the first sample is the average.
func average(avg, x time.Duration) time.Duration {
	if avg == 0 {
		return max(x, 1)
	}
	return avg + (x-avg)/8
}

// gatherWindow is how long a receive loop waits for more room so that one
// receive can ask for a full batch: receives of one or two messages cost as
// many requests as receives of ten.
const gatherWindow = 10 * time.Millisecond

// gather takes room for one message of queue q, waiting for it, then for
// up to 10 (SQS's MaxNumberOfMessages; fewer when the intake's limit is
// lower), waiting at most gatherWindow for more. Only one receive loop of
// a queue gathers at a time (the caller holds the queue's gathering
// token), so concurrent loops never split the room between them and wait
// on each other; while one loop's receive is on the wire, the next
// gathers. It returns how many units it holds, or, over, how many
// messages a receive holding none may ask for (see share); ok is false
// when ctx ended first.
func (in *intake) gather(ctx context.Context, q int) (n int, over, ok bool) {
	room := in.room
	if in.shares != nil {
		room = in.shares[q].room
	}
	for n == 0 {
		if n, over = in.take(q, sqsloop.MaxBatchSize, true); n > 0 {
			break
		}
		select {
		case <-room:
		case <-ctx.Done():
			return 0, false, false
		}
	}
	want := in.batch(q)
	if over || n >= want {
		return n, over, true
	}
	t := time.NewTimer(gatherWindow)
	defer t.Stop()
	for n < want {
		select {
		case <-room:
			more, _ := in.take(q, want-n, false)
			n += more
		case <-t.C:
			return n, false, true
		case <-ctx.Done():
			return n, false, true // the caller sees ctx and gives the units back
		}
	}
	return n, false, true
}
