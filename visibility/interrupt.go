package visibility

import (
	"context"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Interrupted is what Interrupt did.
type Interrupted struct {
	// Leases is how many leases were held, Interrupt's to settle: all but
	// those in a call on the wire at that moment (left to that call) and
	// those already lost (their message is visible, or delivered again).
	Leases int
	// Acked counts decided acks deleted; GivenBack leases made visible
	// (after their back-off for decided nacks, at once for the rest).
	Acked, GivenBack int
	// Failed counts leases whose call failed or did not come back in
	// time: their messages become visible at their lease deadlines, by
	// VisibleBy at the latest (the latest deadline of the leases settled;
	// zero when none failed).
	Failed    int
	VisibleBy time.Time
}

// takeAll empties the heap and the batch queues, calling f for each lease
// they held (not those in a call on the wire). Called with m.mu held.
func (m *Manager) takeAll(f func(*Lease)) {
	for _, q := range [][]*Lease{m.leases, m.acks, m.nacks} {
		for _, l := range q {
			f(l)
		}
	}
	m.leases, m.acks, m.nacks = nil, nil, nil
}

// Interrupt ends the Manager's work at once, for a process about to exit (a
// second Ctrl+C): it stops serving (later decisions are ignored, nothing is
// extended any more) and settles every lease it holds in one best-effort
// round of batch calls made at once, with ctx: decided acks are deleted,
// decided nacks made visible after their back-off, and every other lease
// (handlers still running, messages waiting for one, give-backs) made
// visible at once. Nothing is retried. It returns when every call has come
// back or ctx is done, whichever is first; a call still on the wire then
// is left to the process's exit. Keep ctx short: a process that exits does
// not wait. Safe for concurrent use, also while Run runs; a second call
// settles nothing.
func (m *Manager) Interrupt(ctx context.Context) Interrupted {
	m.mu.Lock()
	m.stopped = true
	var acks, changes []*Lease
	take := func(l *Lease) {
		if l.done || l.busy {
			return
		}
		m.finish(l)
		if l.lost != nil {
			return
		}
		if l.decided == acking {
			acks = append(acks, l)
		} else {
			changes = append(changes, l)
		}
	}
	m.takeAll(take)
	m.mu.Unlock()

	r := Interrupted{Leases: len(acks) + len(changes)}
	var latest time.Time // the latest deadline: when the last of them reappears
	for _, q := range [][]*Lease{acks, changes} {
		for _, l := range q {
			if l.deadline.After(latest) {
				latest = l.deadline
			}
		}
	}
	var mu sync.Mutex
	tally := func(batch []*Lease, errs []error, err error, acked bool) {
		mu.Lock()
		defer mu.Unlock()
		for i := range batch {
			switch {
			case err == nil && i < len(errs) && errs[i] == nil && acked:
				r.Acked++
			case err == nil && i < len(errs) && errs[i] == nil:
				r.GivenBack++
			default:
				r.Failed++
			}
		}
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxCalls)
	for len(acks) > 0 || len(changes) > 0 {
		acked := len(acks) > 0
		q := &changes
		if acked {
			q = &acks
		}
		n := min(len(*q), sqsloop.MaxBatchSize)
		batch := (*q)[:n:n]
		*q = (*q)[n:]
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			if acked {
				handles := make([]string, len(batch))
				for i, l := range batch {
					handles[i] = l.msg.ReceiptHandle
				}
				errs, err := m.mb.Delete(ctx, handles)
				tally(batch, errs, err, true)
				return
			}
			vcs := make([]sqsloop.VisibilityChange, len(batch))
			for i, l := range batch {
				if l.decided == nacking {
					vcs[i].Timeout = l.delay
				}
				vcs[i].ReceiptHandle = l.msg.ReceiptHandle
			}
			errs, err := m.mb.ChangeVisibility(ctx, vcs)
			tally(batch, errs, err, false)
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	out := r
	// Calls still on the wire count as failed: they may not land.
	out.Failed = out.Leases - out.Acked - out.GivenBack
	if out.Failed > 0 {
		out.VisibleBy = latest
	}
	return out
}
