package integration

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// fullFleetEnv, set to 1, runs the fleet tests at the size (the
// noisy tenant's 10,000 jobs, with and without the limit; the rate limit
// for 60 s): minutes on the wire, so CI runs them smaller.
const fullFleetEnv = "SQSLOOP_FLEET_FULL"

func fullFleet() bool { return os.Getenv(fullFleetEnv) == "1" }

// pickups records when each message was sent and when its handler first
// started, by body, and how many handlers of a group ran at once.
type pickups struct {
	mu      sync.Mutex
	sent    map[string]time.Time
	started map[string]time.Time
	runs    map[string]int
	running map[string]int
	most    map[string]int
}

func newPickups() *pickups {
	return &pickups{sent: map[string]time.Time{}, started: map[string]time.Time{}, runs: map[string]int{},
		running: map[string]int{}, most: map[string]int{}}
}

// send sends the messages of group g numbered from..to-1, in batches of
// 10, bodies "g-i".
func (p *pickups) send(ctx context.Context, t *testing.T, mb sqsloop.Mailbox, g string, from, to int) {
	t.Helper()
	for i := from; i < to; i += sqsloop.MaxBatchSize {
		var out []sqsloop.OutgoingMessage
		for j := i; j < min(to, i+sqsloop.MaxBatchSize); j++ {
			out = append(out, sqsloop.OutgoingMessage{Body: fmt.Sprint(g, "-", j), MessageGroupID: g})
		}
		now := time.Now()
		p.mu.Lock()
		for _, o := range out {
			p.sent[o.Body] = now
		}
		p.mu.Unlock()
		res, err := mb.Send(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
}

func (p *pickups) handler(h mailboxtest.Harness, job time.Duration) sqsloop.Handler {
	return func(ctx context.Context, m *sqsloop.Message) error {
		g, _, _ := strings.Cut(m.Body, "-") // the tenant, on every server
		p.mu.Lock()
		if _, ok := p.started[m.Body]; !ok {
			p.started[m.Body] = time.Now()
		}
		p.runs[m.Body]++
		p.running[g]++
		p.most[g] = max(p.most[g], p.running[g])
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			p.running[g]--
			p.mu.Unlock()
		}()
		return h.Sleep(ctx, job)
	}
}

// quiet returns the pickup latencies of the quiet tenants' messages
// (groups t0…t9), sorted, and how many have not started.
func (p *pickups) quiet() (lat []time.Duration, missing int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for body, sent := range p.sent {
		if !strings.HasPrefix(body, "t") {
			continue
		}
		s, ok := p.started[body]
		if !ok {
			missing++
			continue
		}
		lat = append(lat, s.Sub(sent))
	}
	slices.Sort(lat)
	return lat, missing
}

func percentile(lat []time.Duration, p int) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	return lat[(len(lat)*p+99)/100-1]
}

// The noisy tenant (issue 29) on every mailbox: one consumer of 16
// handlers; tenant A sends its jobs of 100 ms (600 here, 10,000 with
// SQSLOOP_FLEET_FULL=1), then ten tenants send 20 each while A drains (one
// each every 500 ms). With GroupLimit 4 the quiet tenants' pickup p99 is
// under 1 s, A never runs more than 4 at once, no job fails or runs twice,
// nothing is dead-lettered (the queue's maxReceiveCount is 10). At full
// size it runs again without the limit and logs how long the quiet
// tenants wait then.
func TestE2ENoisyTenant(t *testing.T) {
	t.Parallel()
	a := 600 // 15 s of A's work at 4 at a time: A still drains when the quiet tenants are done
	limits := []int{4}
	if fullFleet() {
		a, limits = 10_000, []int{4, 0}
	}
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		for _, limit := range limits {
			noisyTenant(t, h, a, limit)
		}
	})
}

func noisyTenant(t *testing.T, h mailboxtest.Harness, a, limit int) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 10})
	defer cleanup()
	p := newPickups()
	began := time.Now()
	p.send(ctx, t, q.Mailbox, "A", 0, a)
	sendTook := time.Since(began)
	cfg := consumer.Config{Concurrency: 16, GroupLimit: limit, WaitTime: 2 * time.Second, Logger: quietLogger}
	if limit > 0 && !h.Features().StandardGroupID {
		// fauxqs drops a standard queue's MessageGroupID (a declared
		// difference): the tenant is read from the body instead, a key
		// GroupOf picks as any function of the message may.
		cfg.GroupOf = func(m *sqsloop.Message) string { g, _, _ := strings.Cut(m.Body, "-"); return g }
	}
	c, err := consumer.New(q.Mailbox, p.handler(h, 100*time.Millisecond), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	if err := h.Sleep(ctx, 500*time.Millisecond); err != nil { // A floods first
		t.Fatal(err)
	}
	for round := range 20 {
		for i := range 10 {
			p.send(ctx, t, q.Mailbox, fmt.Sprint("t", i), round, round+1)
		}
		if err := h.Sleep(ctx, 500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	var lat []time.Duration
	if !waitUntil(ctx, h, 5*time.Minute, 100*time.Millisecond, func() bool {
		l, missing := p.quiet()
		lat = l
		return missing == 0
	}) {
		t.Fatalf("GroupLimit %d: the quiet tenants' messages did not all start", limit)
	}
	p.mu.Lock()
	aStarted := 0
	for body := range p.started {
		if strings.HasPrefix(body, "A-") {
			aStarted++
		}
	}
	mostA := p.most["A"]
	var twice []string
	for body, n := range p.runs {
		if n > 1 {
			twice = append(twice, body)
		}
	}
	p.mu.Unlock()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	st := c.Stats()
	t.Logf("%s, GroupLimit %d, A %d jobs (sent in %v): quiet tenants' pickup p50 %v p99 %v max %v; A started %d of %d meanwhile, at most %d at once; "+
		"deferred %d times (%.2f per A job), waits %d, failed %d",
		h.Name(), limit, a, sendTook.Round(time.Millisecond), percentile(lat, 50).Round(time.Millisecond), percentile(lat, 99).Round(time.Millisecond),
		lat[len(lat)-1].Round(time.Millisecond), aStarted, a, mostA, st.Deferred, float64(st.Deferred)/float64(a), st.Waited, st.Failed)
	if limit == 0 {
		return // the figure for the report
	}
	// Under 1 s in virtual time and in the acceptance run; on a server in
	// CI, where a loaded machine slows every pickup, under 5 s (without the
	// limit the quiet tenants wait about a minute: a broken limit still
	// fails).
	bound := time.Second
	if !h.Features().VirtualTime && os.Getenv(fullFleetEnv) == "" {
		bound = 5 * time.Second
	}
	if p99 := percentile(lat, 99); p99 >= bound {
		t.Errorf("GroupLimit %d: the quiet tenants' pickup p99 is %v, want under %v", limit, p99, bound)
	}
	if aStarted >= a {
		t.Errorf("A's %d jobs all started before the quiet tenants were done: A was not still draining", a)
	}
	if mostA > limit {
		t.Errorf("A ran %d at once, want at most its GroupLimit %d", mostA, limit)
	}
	if len(twice) > 0 || st.Failed > 0 {
		t.Errorf("%d jobs ran more than once (%v), %d failed; want none", len(twice), twice[:min(len(twice), 5)], st.Failed)
	}
	if q.DLQ != nil {
		if n := len(leftovers(context.WithoutCancel(ctx), t, q.DLQ, time.Second)); n > 0 {
			t.Errorf("%d messages in the dead-letter queue, want none", n)
		}
	}
}
