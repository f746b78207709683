package consumer

import (
	"sync"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

// run is what one handler goroutine works through in order: one message on
// a standard queue, or the messages of one FIFO message group that a
// receive returned together (SQS keeps their order; so must we). The
// messages waiting behind the first keep their leases meanwhile, and when
// shutdown begins they are given back at once.
type run struct {
	msgs   []*sqsloop.Message
	leases []*visibility.Lease

	mu   sync.Mutex
	next int // messages before next were started or given back
}

// take returns the index of the next message to start; ok is false when
// none is left.
func (r *run) take() (i int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next >= len(r.msgs) {
		return 0, false
	}
	r.next++
	return r.next - 1, true
}

// rest closes the run and returns the indexes of the messages not started.
func (r *run) rest() (first, end int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first, end = r.next, len(r.msgs)
	r.next = end
	return first, end
}

// groupRuns splits msgs into runs: one per message group on a FIFO queue,
// one per message otherwise.
func groupRuns(msgs []*sqsloop.Message) []*run {
	runs := make([]*run, 0, len(msgs))
	var index map[string]int
	for i, m := range msgs {
		if m.MessageGroupID == "" {
			runs = append(runs, &run{msgs: msgs[i : i+1 : i+1]}) // capacity 1: an append copies
			continue
		}
		if index == nil {
			index = map[string]int{}
		}
		if j, ok := index[m.MessageGroupID]; ok {
			runs[j].msgs = append(runs[j].msgs, m)
			continue
		}
		index[m.MessageGroupID] = len(runs)
		runs = append(runs, &run{msgs: msgs[i : i+1 : i+1]})
	}
	return runs
}

// waiting tracks the runs with messages waiting behind a running one, so
// the drain can give those back at once.
type waiting struct {
	mu   sync.Mutex
	runs map[*run]struct{}
}

func (w *waiting) add(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runs == nil {
		w.runs = map[*run]struct{}{}
	}
	w.runs[r] = struct{}{}
}

func (w *waiting) remove(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.runs, r)
}

// all returns the runs tracked now.
func (w *waiting) all() []*run {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*run, 0, len(w.runs))
	for r := range w.runs {
		out = append(out, r)
	}
	return out
}
