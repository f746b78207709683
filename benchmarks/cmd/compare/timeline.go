package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
)

// roundTripBound is what counts as one ReceiveMessage round trip on the
// local server (fauxqs on loopback answers a receive of visible messages
// in a few milliseconds): a buffer wait longer than this is not the
// receive's own latency.
const roundTripBound = 50 * time.Millisecond

// arrivals records, by receipt handle, when the ReceiveMessage call that
// returned it returned to its caller (the implementation's own code, or
// the library it uses). Receipt handles are unique per receive, so one
// arrivals can serve every client of a run. Safe for concurrent use.
type arrivals struct {
	mu sync.Mutex
	at map[string]time.Time
}

func newArrivals() *arrivals { return &arrivals{at: map[string]time.Time{}} }

// record notes that the receive returning the receipt handles rhs returned
// at t.
func (a *arrivals) record(t time.Time, rhs ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, rh := range rhs {
		a.at[rh] = t
	}
}

// lookup returns when the receive that returned receipt handle rh
// returned, and whether it was seen.
func (a *arrivals) lookup(rh string) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.at[rh]
	return t, ok
}

// option returns an sqs.Options function that records the arrival of
// every message the client receives: a middleware at the start of the
// Initialize step (outside the retry loop and deserialisation) notes the
// time its ReceiveMessage call returns with messages.
func (a *arrivals) option() func(*sqs.Options) {
	return func(o *sqs.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("compare.arrivals",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					out, md, err := next.HandleInitialize(ctx, in)
					if r, ok := out.Result.(*sqs.ReceiveMessageOutput); ok && err == nil && len(r.Messages) > 0 {
						now := time.Now()
						rhs := make([]string, len(r.Messages))
						for i, m := range r.Messages {
							rhs[i] = aws.ToString(m.ReceiptHandle)
						}
						a.record(now, rhs...)
					}
					return out, md, err
				}), middleware.Before)
		})
	}
}

// timeline records, for a run of several workers on one queue, every
// handler run (which worker, when its message arrived at the worker, when
// the handler started) and every change of each worker's running
// handlers. Safe for concurrent use.
type timeline struct {
	arrivals *arrivals
	mu       sync.Mutex
	runs     []handlerRun
	running  []int        // per worker, now
	changes  []slotChange // every change of a worker's running handlers
}

// handlerRun is one handler run of a worker.
type handlerRun struct {
	worker, index int
	// arrived is when the receive that brought the message to the worker
	// returned; zero when that receive was not seen.
	arrived, started time.Time
}

// slotChange says that from at on, worker ran running handlers.
type slotChange struct {
	at      time.Time
	worker  int
	running int
}

func newTimeline(workers int, a *arrivals) *timeline {
	return &timeline{arrivals: a, running: make([]int, workers)}
}

// begin records a handler of worker w starting on message i (receipt
// handle rh) at now.
func (tl *timeline) begin(w, i int, rh string, now time.Time) {
	arrived, _ := tl.arrivals.lookup(rh)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.runs = append(tl.runs, handlerRun{worker: w, index: i, arrived: arrived, started: now})
	tl.running[w]++
	tl.changes = append(tl.changes, slotChange{at: now, worker: w, running: tl.running[w]})
}

// end records a handler of worker w returning at now.
func (tl *timeline) end(w int, now time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.running[w]--
	tl.changes = append(tl.changes, slotChange{at: now, worker: w, running: tl.running[w]})
}

// workerStats is what a timeline shows of how the workers shared the
// queue.
type workerStats struct {
	// handled is the handler runs of each worker, duplicates included.
	handled []int
	// largestWait is the largest buffer wait of a handler run, totalWait
	// their sum, and waitedLong how many exceeded roundTripBound.
	largestWait, totalWait time.Duration
	waitedLong             int
	// noArrival counts handler runs whose receive was not seen (0 unless
	// the harness is broken; their wait is not counted).
	noArrival int
}

// stats computes the workers' spread and the buffer waits. A handler run's
// buffer wait is how long, between its message's arrival at the worker
// and the handler's start, another worker had a free handler slot (fewer
// than concurrency handlers running); the time after until (when every
// message had been handled once, the workers stopping; zero: never) does
// not count.
func (tl *timeline) stats(concurrency int, until time.Time) workerStats {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	changes := slices.Clone(tl.changes)
	slices.SortStableFunc(changes, func(a, b slotChange) int { return a.at.Compare(b.at) })
	st := workerStats{handled: make([]int, len(tl.running))}
	for _, r := range tl.runs {
		st.handled[r.worker]++
		if r.arrived.IsZero() {
			st.noArrival++
			continue
		}
		to := r.started
		if !until.IsZero() && until.Before(to) {
			to = until
		}
		w := othersFree(changes, len(tl.running), r.worker, concurrency, r.arrived, to)
		st.totalWait += w
		st.largestWait = max(st.largestWait, w)
		if w > roundTripBound {
			st.waitedLong++
		}
	}
	return st
}

// othersFree returns how long within [from, to) a worker other than w had
// fewer than concurrency handlers running, given every change of the
// workers' running handlers in time order (each worker runs none before
// its first change).
func othersFree(changes []slotChange, workers, w, concurrency int, from, to time.Time) time.Duration {
	if !to.After(from) {
		return 0
	}
	running := make([]int, workers)
	free := func() bool {
		for o, n := range running {
			if o != w && n < concurrency {
				return true
			}
		}
		return false
	}
	var total time.Duration
	at := from
	for _, c := range changes {
		if c.at.After(at) {
			if !c.at.Before(to) {
				break
			}
			if free() {
				total += c.at.Sub(at)
			}
			at = c.at
		}
		running[c.worker] = c.running
	}
	if free() {
		total += to.Sub(at)
	}
	return total
}
