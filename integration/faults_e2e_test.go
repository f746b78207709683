package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/visibility"
)

// injectedError is a transient failure made up by faultyMailbox. It wraps
// no sqsloop sentinel, so by the Mailbox contract the caller may retry.
type injectedError struct {
	op    string // "receive", "delete", "change visibility"
	where string // "before the call", "answer lost", "entry"
}

func (e *injectedError) Error() string {
	return fmt.Sprintf("faults: injected transient failure: %s (%s)", e.op, e.where)
}

// faultCounts counts what faultyMailbox did.
type faultCounts struct {
	calls, before, after, entries, entriesFailed atomic.Int64
}

func (c *faultCounts) String() string {
	return fmt.Sprintf("%d calls, %d failed before reaching the mailbox, %d failed after it (answer lost), %d of %d entries failed alone",
		c.calls.Load(), c.before.Load(), c.after.Load(), c.entriesFailed.Load(), c.entries.Load())
}

// faultyMailbox fails a share (rate) of Receive, Delete and ChangeVisibility
// calls with a transient error: half of them before the call reaches the
// mailbox (nothing done), half after the mailbox applied it (the answer lost
// on the way back: a receive's messages are taken and hidden, a delete or
// visibility change is done, and the caller is told it failed). Of the
// Delete and ChangeVisibility calls that go through, each entry fails alone
// at the same rate (not applied, transient error). Send passes through.
// Decisions come from one seeded generator under a mutex, so a run is
// repeatable up to the order goroutines ask in.
type faultyMailbox struct {
	sqsloop.Mailbox
	rate float64

	mu  sync.Mutex
	rng *rand.Rand

	receive, delete, change faultCounts
}

func newFaultyMailbox(mb sqsloop.Mailbox, rate float64, seed uint64) *faultyMailbox {
	return &faultyMailbox{Mailbox: mb, rate: rate, rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

// fault kinds for a whole call.
const (
	noFault = iota
	faultBefore
	faultAfter
)

// plan decides a call's fate and, for a batch of n entries, which entries
// fail alone.
func (f *faultyMailbox) plan(n int) (whole int, entries []bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() < f.rate {
		if f.rng.IntN(2) == 0 {
			return faultBefore, nil
		}
		return faultAfter, nil
	}
	entries = make([]bool, n)
	for i := range entries {
		entries[i] = f.rng.Float64() < f.rate
	}
	return noFault, entries
}

func (f *faultyMailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	f.receive.calls.Add(1)
	whole, _ := f.plan(0)
	if whole == faultBefore {
		f.receive.before.Add(1)
		return nil, &injectedError{op: "receive", where: "before the call"}
	}
	msgs, err := f.Mailbox.Receive(ctx, req)
	if whole == faultAfter && err == nil {
		f.receive.after.Add(1)
		return nil, &injectedError{op: "receive", where: "answer lost"}
	}
	return msgs, err
}

func (f *faultyMailbox) Delete(ctx context.Context, receiptHandles []string) ([]error, error) {
	return batchWithFaults(f, &f.delete, "delete", receiptHandles, func(hs []string) ([]error, error) {
		return f.Mailbox.Delete(ctx, hs)
	})
}

func (f *faultyMailbox) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	return batchWithFaults(f, &f.change, "change visibility", changes, func(cs []sqsloop.VisibilityChange) ([]error, error) {
		return f.Mailbox.ChangeVisibility(ctx, cs)
	})
}

// batchWithFaults makes one batch call through call with faults injected:
// a whole-call fault before or after it, or single entries failed (left out
// of the call) and the rest passed on, results mapped back in order.
func batchWithFaults[E any](f *faultyMailbox, c *faultCounts, op string, entries []E, call func([]E) ([]error, error)) ([]error, error) {
	c.calls.Add(1)
	whole, failed := f.plan(len(entries))
	switch whole {
	case faultBefore:
		c.before.Add(1)
		return nil, &injectedError{op: op, where: "before the call"}
	case faultAfter:
		errs, err := call(entries)
		if err != nil {
			return errs, err
		}
		c.after.Add(1)
		return nil, &injectedError{op: op, where: "answer lost"}
	}
	c.entries.Add(int64(len(entries)))
	out := make([]error, len(entries))
	var pass []E
	var at []int
	for i, e := range entries {
		if failed[i] {
			c.entriesFailed.Add(1)
			out[i] = &injectedError{op: op, where: "entry"}
			continue
		}
		pass = append(pass, e)
		at = append(at, i)
	}
	if len(pass) == 0 {
		return out, nil
	}
	errs, err := call(pass)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		if j < len(errs) {
			out[i] = errs[j]
		} else {
			out[i] = fmt.Errorf("faults: the mailbox gave no result for entry %d", i)
		}
	}
	return out, nil
}

// faultRate is the share of calls, and of entries of the calls that go
// through, that faultyMailbox fails.
const faultRate = 0.30

// maxDuplicateShare is the share of messages that may run more than once
// under faultRate: at least once delivery allows some (an answer lost after
// a delete was applied is indistinguishable from a failed delete), but a
// failed ack must be retried while the lease holds, not dropped.
const maxDuplicateShare = 0.02

// With 30 % of Receive, Delete and ChangeVisibility calls failing
// transiently (whole calls before or after they took effect, and single
// entries of batches), every message is still handled and finally deleted,
// and at most 2 % run more than once: an ack that fails transiently is
// retried while the lease is kept alive, not logged and dropped. 2,000
// messages, 16 handlers of 10 ms, 3 s leases with extension on.
//
// Guards the bug where a failed DeleteMessageBatch call, or a failed entry
// in a successful one, was logged and dropped, so the message ran again
// after its lease: 14–17 % of 2,000 messages ran twice.
func TestE2EFailedAcksAreRetried(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		const vis = 3 * time.Second
		const n = 2000 // about 10 s of wall clock on fauxqs
		patienceAll := 10 * time.Minute
		if !h.Features().VirtualTime {
			patienceAll = 40 * time.Second
		}
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: vis})
		defer cleanup()
		began := time.Now()
		ids := mailboxtest.SendBodies(ctx, t, q.Mailbox, jobBodies(n)...)
		sent := time.Since(began)

		fm := newFaultyMailbox(q.Mailbox, faultRate, 20240611)
		runs := newRunLog()
		cfg := e2eConfig()
		cfg.Concurrency = 16
		cfg.VisibilityTimeout = vis
		cfg.Visibility = visibility.Config{Interval: time.Second, Extension: vis}
		cfg.ShutdownTimeout = 10 * time.Second
		c, err := consumer.New(fm, runs.handler(func(ctx context.Context) error {
			heartbeat.Beat(ctx)
			return h.Sleep(ctx, 10*time.Millisecond)
		}), cfg)
		if err != nil {
			t.Fatal(err)
		}
		began = time.Now()
		stop := runConsumer(t, c)
		if !waitUntil(ctx, h, patienceAll, 100*time.Millisecond, func() bool { return runs.startedAll(ids) }) {
			t.Errorf("%s: not every message ran within %v", h.Name(), patienceAll)
		}
		allRan := time.Since(began)
		// A message whose ack was dropped runs again once its lease lapses:
		// give those two leases' time to show up.
		if err := h.Sleep(ctx, 2*vis+time.Second); err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Errorf("%s: Run: %v", h.Name(), err)
		}
		left := leftovers(ctx, t, q.Mailbox, vis+2*time.Second)

		fig := runs.figures(ids)
		st := c.Stats()
		limit := int(float64(n) * maxDuplicateShare)
		t.Logf("%s: %d messages (sent in %v), every one ran within %v: %s", h.Name(), n, sent.Round(time.Millisecond), allRan.Round(time.Millisecond), fig)
		t.Logf("%s: duplicates %d = %.2f %% of %d (limit %d = %.0f %%); %d left in the queue after the consumer stopped",
			h.Name(), fig.duplicates, 100*float64(fig.duplicates)/float64(n), n, limit, 100*maxDuplicateShare, len(left))
		t.Logf("%s: faults: receive %v; delete %v; change visibility %v", h.Name(), &fm.receive, &fm.delete, &fm.change)
		t.Logf("%s: stats %+v", h.Name(), st)
		if fig.never != 0 {
			t.Errorf("%s: %d of %d messages never ran", h.Name(), fig.never, n)
		}
		if fig.duplicates > limit {
			t.Errorf("%s: %d of %d messages (%.2f %%) ran more than once, want at most %d (%.0f %%)",
				h.Name(), fig.duplicates, n, 100*float64(fig.duplicates)/float64(n), limit, 100*maxDuplicateShare)
		}
		if len(left) != 0 {
			t.Errorf("%s: %d messages still in the queue after the consumer stopped (acks dropped): %s", h.Name(), len(left), describe(left[:min(len(left), 5)]))
		}
	})
}
