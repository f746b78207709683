package integration

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// Durations the end-to-end tests share, as the conformance suite's: whole
// seconds, since real servers count whole seconds.
const (
	// longLease keeps a message hidden for the rest of a test.
	longLease = 30 * time.Second
	// shortLease lapses within a test.
	shortLease = 2 * time.Second
	// patience bounds a wait for a message that must arrive.
	patience = 10 * time.Second
)

// jobBodies returns n message bodies: "job-0", "job-1", ….
func jobBodies(n int) []string {
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprint("job-", i)
	}
	return bodies
}

// describe lists messages by ID, body and receive count, for failure output.
func describe(msgs []*sqsloop.Message) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = fmt.Sprintf("{id=%s body=%.64q count=%d}", m.ID, m.Body, m.ReceiveCount)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// runLog counts a handler's runs per message ID: started when the handler
// is entered, finished when it returns nil. Safe for concurrent use.
type runLog struct {
	mu       sync.Mutex
	started  map[string]int
	finished map[string]int
	order    []string // bodies, in the order their first run started
	seen     map[string]bool
}

func newRunLog() *runLog {
	return &runLog{started: map[string]int{}, finished: map[string]int{}, seen: map[string]bool{}}
}

// handler returns a handler that records each of its runs: started when it
// is entered, finished when work returns nil. It returns work's error.
func (r *runLog) handler(work func(ctx context.Context) error) sqsloop.Handler {
	return func(ctx context.Context, m *sqsloop.Message) error {
		r.start(m)
		if err := work(ctx); err != nil {
			return err
		}
		r.finish(m)
		return nil
	}
}

// start records a run of m.
func (r *runLog) start(m *sqsloop.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started[m.ID]++
	if !r.seen[m.ID] {
		r.seen[m.ID] = true
		r.order = append(r.order, m.Body)
	}
}

// finish records that a run of m returned nil.
func (r *runLog) finish(m *sqsloop.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished[m.ID]++
}

// finishedAll reports whether every one of ids has finished at least once.
func (r *runLog) finishedAll(ids []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if r.finished[id] == 0 {
			return false
		}
	}
	return true
}

// startedAll reports whether every one of ids has started at least once.
func (r *runLog) startedAll(ids []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if r.started[id] == 0 {
			return false
		}
	}
	return true
}

// runsOf returns how many runs of id have started.
func (r *runLog) runsOf(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started[id]
}

// firstOrder returns the bodies in the order their first run started.
func (r *runLog) firstOrder() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

// runFigures sums up the runs of ids: how many never ran, how many ran more
// than once (duplicates), the most runs of one message, and the total.
type runFigures struct {
	never, duplicates, most, total int
	histogram                      map[int]int // runs → messages
}

func (f runFigures) String() string {
	keys := make([]int, 0, len(f.histogram))
	for k := range f.histogram {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf(" %d×:%d", k, f.histogram[k])
	}
	return fmt.Sprintf("never ran %d, ran more than once %d, most runs of one message %d, runs in all %d; messages by runs:%s",
		f.never, f.duplicates, f.most, f.total, s)
}

func (r *runLog) figures(ids []string) runFigures {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := runFigures{histogram: map[int]int{}}
	for _, id := range ids {
		n := r.started[id]
		f.histogram[n]++
		f.total += n
		f.most = max(f.most, n)
		switch {
		case n == 0:
			f.never++
		case n > 1:
			f.duplicates++
		}
	}
	return f
}

// waitUntil checks cond every step (waiting with h.Sleep) until it holds or
// d has passed, and returns its last result.
func waitUntil(ctx context.Context, h mailboxtest.Harness, d, step time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; {
		if cond() {
			return true
		}
		if !time.Now().Before(end) {
			return false
		}
		if err := h.Sleep(ctx, step); err != nil {
			return cond()
		}
	}
}

// awaitErr waits up to d for ch's value; ok is false when d passed first.
// Inside a synctest bubble d is virtual.
func awaitErr(ch <-chan error, d time.Duration) (err error, ok bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-ch:
		return err, true
	case <-timer.C:
		return nil, false
	}
}

// awaitClosed waits up to d for ch to be closed and reports whether it was.
func awaitClosed(ch <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

// leftovers long-polls mb, wait at a time, until a poll comes back empty,
// and returns what it received (deleted as it goes, so that the queue is
// clean and a message is counted once). With wait longer than the leases the
// consumer used, a message whose ack was dropped shows up here when its
// lease lapses. At most 20 polls.
func leftovers(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, wait time.Duration) []*sqsloop.Message {
	t.Helper()
	return leftoversAwaiting(ctx, t, mb, wait, nil, 0)
}

// leftoversAwaiting is leftovers that, while a message of want has not
// come, polls on past an empty poll until lapse has passed since it began.
// A receive call that the consumer abandoned at shutdown (its answer later
// than the consumer's receive grace, as on a loaded server) leaves its
// messages hidden for their visibility timeout, as SQS does: with lapse
// past that timeout they come back here rather than counting as lost,
// while a test where every message is back at once pays one empty poll.
func leftoversAwaiting(ctx context.Context, t testing.TB, mb sqsloop.Mailbox, wait time.Duration, want []string, lapse time.Duration) []*sqsloop.Message {
	t.Helper()
	missing := map[string]bool{}
	for _, id := range want {
		missing[id] = true
	}
	until := time.Now().Add(lapse)
	var got []*sqsloop.Message
	waited := false
	for range 20 + int(lapse/wait) {
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{
			MaxMessages:       sqsloop.MaxBatchSize,
			VisibilityTimeout: longLease,
			WaitTime:          wait,
		})
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		if len(msgs) == 0 {
			if len(missing) == 0 || time.Now().After(until) {
				break
			}
			if !waited {
				waited = true
				t.Logf("%d messages not back yet; polling for them up to %v (a receive abandoned at shutdown hides its messages for their visibility timeout)", len(missing), time.Until(until).Round(time.Second))
			}
		}
		for _, m := range msgs {
			delete(missing, m.ID)
		}
		got = append(got, msgs...)
		mailboxtest.AckAll(ctx, t, mb, msgs...)
	}
	return got
}
