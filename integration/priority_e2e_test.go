package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/visibility"
)

// A consumer has every method a lifecycle loop may have (see
// lifecycle.Runnable) by its method set.
var _ interface {
	lifecycle.Runnable
	Shutdown(context.Context) error
	Ready() error
	Interrupt(context.Context)
	Pause()
	Resume()
	Paused() (bool, int)
} = (*consumer.Consumer)(nil)

// Priority shutdown under one budget, with real consumers on every
// backend: one LoopGroup with a GracePeriod of 20 s (an 18 s budget), a
// critical consumer of long jobs (6 s; 2 handlers) and a background
// consumer of short ones (bgJob; 4 handlers, LoopOption.Background 2 s). Shutdown
// begins 1 s in. With short jobs (300 ms) the background consumer is done
// first, within its 2 s, and the critical one finishes its two jobs 5 s
// later, inside the group's budget: Run returns nil. With jobs longer than
// the background budget (5 s), the background consumer's handlers are
// cancelled at its 2 s and their messages given back, while the critical
// consumer still finishes its jobs: Run reports the background loop's
// drain timeout. Either way nothing is lost: every job that finished ran
// once and was acked, and every other one is in its queue again: at once,
// or, for one a receive brought after the consumer gave up on it at
// shutdown (an answer later than the receive grace, from a loaded
// server), after its visibility timeout, as on SQS.
func TestE2EPriorityShutdownUnderOneBudget(t *testing.T) {
	t.Parallel()
	for _, bgJob := range []time.Duration{300 * time.Millisecond, 5 * time.Second} {
		t.Run(fmt.Sprint("background jobs of ", bgJob), func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) { priorityShutdown(t, h, bgJob) })
		})
	}
}

func priorityShutdown(t *testing.T, h mailboxtest.Harness, bgJob time.Duration) {
	ctx := t.Context()
	const vis = 10 * time.Second
	longQ, cleanLong := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: vis})
	defer cleanLong()
	shortQ, cleanShort := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: vis})
	defer cleanShort()
	longIDs := mailboxtest.SendBodies(ctx, t, longQ.Mailbox, jobBodies(4)...)
	shortIDs := mailboxtest.SendBodies(ctx, t, shortQ.Mailbox, jobBodies(40)...)

	cfg := func(n int) consumer.Config {
		return consumer.Config{
			Concurrency: n, VisibilityTimeout: vis, WaitTime: time.Second,
			Visibility: visibility.Config{Interval: 2 * time.Second, Extension: 10 * time.Second},
			Logger:     quietLogger, // ShutdownTimeout left zero: the group's share is the budget
		}
	}
	longRuns, shortRuns := newRunLog(), newRunLog()
	critical, err := consumer.New(longQ.Mailbox, longRuns.handler(func(ctx context.Context) error {
		return beat(ctx, h, 6*time.Second, 500*time.Millisecond)
	}), cfg(2))
	if err != nil {
		t.Fatal(err)
	}
	background, err := consumer.New(shortQ.Mailbox, shortRuns.handler(func(ctx context.Context) error {
		return beat(ctx, h, bgJob, 100*time.Millisecond)
	}), cfg(4))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	group := &lifecycle.LoopGroup{GracePeriod: 20 * time.Second, Signals: []os.Signal{},
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))}
	if err := group.Add("orders", critical); err != nil {
		t.Fatal(err)
	}
	if err := group.Add("thumbnails", background, lifecycle.LoopOption{Background: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	res := make(chan error, 1)
	go func() { res <- group.Run(runCtx) }()
	if !waitUntil(ctx, h, patience, 10*time.Millisecond, func() bool {
		return len(longRuns.firstOrder()) == 2 && len(shortRuns.firstOrder()) >= 4
	}) {
		t.Fatalf("the handlers did not start: %d long, %d short", len(longRuns.firstOrder()), len(shortRuns.firstOrder()))
	}
	if err := h.Sleep(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	stop() // shutdown begins
	err, ok := awaitErr(res, time.Minute)
	if !ok {
		t.Fatal("the group has not returned a minute after shutdown began")
	}
	st := group.Stats()
	var timeline []string
	loops := map[string]lifecycle.LoopStats{}
	for _, l := range st.Loops {
		loops[l.Name] = l
		timeline = append(timeline, fmt.Sprintf("%s (%s, budget %v) returned at %v", l.Name, l.Class, l.Budget, l.Returned))
	}
	t.Logf("%s: timeline after shutdown began: %s; Run = %v", h.Name(), strings.Join(timeline, "; "), err)
	crit, bg := loops["orders"], loops["thumbnails"]
	if crit.Budget != 18*time.Second || bg.Budget != 2*time.Second {
		t.Errorf("budgets: critical %v, background %v; want 18s (20s less 2s) and 2s", crit.Budget, bg.Budget)
	}
	// Past its budget a consumer still has its handlers' grace
	// (consumer.DrainGrace) and at least a second to send what they
	// decided; half a second more for a loaded machine.
	after := consumer.DrainGrace + 1500*time.Millisecond
	if !(bg.Returned < crit.Returned) || bg.Returned > bg.Budget+after || crit.Returned > crit.Budget {
		t.Errorf("background returned at %v (budget %v), critical at %v (budget %v): want the background loop first, each within its budget (+%v for its last calls)",
			bg.Returned, bg.Budget, crit.Returned, crit.Budget, after)
	}
	if crit.Returned < 4*time.Second {
		t.Errorf("the critical loop returned at %v: its 6 s jobs, 1 s in at shutdown, were cut short", crit.Returned)
	}
	if bgJob < bg.Budget {
		if err != nil {
			t.Errorf("Run = %v, want nil: every loop drained within its budget", err)
		}
	} else {
		if !errors.Is(bg.Err, consumer.ErrDrainTimeout) || crit.Err != nil || !errors.Is(err, consumer.ErrDrainTimeout) || strings.Contains(err.Error(), `"orders"`) {
			t.Errorf("Run = %v, want the background loop's drain timeout alone", err)
		}
	}
	if cs := critical.Stats(); cs.Succeeded != 2 || cs.Acked != 2 {
		t.Errorf("critical consumer: %+v, want its 2 jobs finished and acked", cs)
	}
	logMu.Lock()
	if !strings.Contains(logs.String(), `msg="lifecycle: group stopped"`) {
		t.Errorf("no timeline line:\n%s", logs.String())
	}
	logMu.Unlock()
	for _, q := range []struct {
		name string
		mb   mailboxtest.Queue
		runs *runLog
		ids  []string
	}{{"long", longQ, longRuns, longIDs}, {"short", shortQ, shortRuns, shortIDs}} {
		// Every unfinished job is back at once, but for those of a receive
		// the consumer abandoned at shutdown (its answer later than the
		// receive grace, as from a loaded server): hidden, as on SQS, for
		// their visibility timeout.
		var unfinished []string
		for _, id := range q.ids {
			if !q.runs.finishedAll([]string{id}) {
				unfinished = append(unfinished, id)
			}
		}
		left := leftoversAwaiting(ctx, t, q.mb.Mailbox, time.Second, unfinished, vis+2*time.Second)
		seen := map[string]int{}
		for _, m := range left {
			seen[m.ID]++
		}
		for _, id := range q.ids {
			done := q.runs.finishedAll([]string{id})
			if done && q.runs.runsOf(id) != 1 {
				t.Errorf("%s queue: job %s ran %d times", q.name, id, q.runs.runsOf(id))
			}
			if n := seen[id]; done == (n > 0) || n > 1 {
				t.Errorf("%s queue: job %s finished %v, found %d times in the queue after: want each job either done or back in the queue", q.name, id, done, n)
			}
		}
	}
}

// lockedWriter serializes writes to w, for a log read while it is written.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
