package consumer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// tenants records, per message body, when it was sent and when its
// handler first started, and how many of a group ran at once.
type tenants struct {
	mu      sync.Mutex
	sent    map[string]time.Time
	started map[string]time.Time
	runs    map[string]int
	running map[string]int // group → handlers running now
	most    map[string]int // group → most running at once
}

func newTenants() *tenants {
	return &tenants{sent: map[string]time.Time{}, started: map[string]time.Time{}, runs: map[string]int{},
		running: map[string]int{}, most: map[string]int{}}
}

// send sends n messages of group g, bodies "g-0", "g-1", ….
func (tn *tenants) send(t *testing.T, q sqsloop.Mailbox, g string, n int) {
	t.Helper()
	for i := 0; i < n; i += sqsloop.MaxBatchSize {
		var out []sqsloop.OutgoingMessage
		for j := i; j < min(n, i+sqsloop.MaxBatchSize); j++ {
			out = append(out, sqsloop.OutgoingMessage{Body: fmt.Sprint(g, "-", j), MessageGroupID: g})
		}
		tn.mu.Lock()
		for _, o := range out {
			tn.sent[o.Body] = time.Now()
		}
		tn.mu.Unlock()
		if _, err := q.Send(t.Context(), out); err != nil {
			t.Fatal(err)
		}
	}
}

// sendOne sends message i of group g, body "g-i".
func (tn *tenants) sendOne(t *testing.T, q sqsloop.Mailbox, g string, i int) {
	t.Helper()
	body := fmt.Sprint(g, "-", i)
	tn.mu.Lock()
	tn.sent[body] = time.Now()
	tn.mu.Unlock()
	if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: body, MessageGroupID: g}}); err != nil {
		t.Fatal(err)
	}
}

// handler runs each message for d.
func (tn *tenants) handler(d time.Duration) sqsloop.Handler {
	return func(ctx context.Context, m *sqsloop.Message) error {
		g := m.MessageGroupID
		tn.mu.Lock()
		if _, ok := tn.started[m.Body]; !ok {
			tn.started[m.Body] = time.Now()
		}
		tn.runs[m.Body]++
		tn.running[g]++
		tn.most[g] = max(tn.most[g], tn.running[g])
		tn.mu.Unlock()
		defer func() {
			tn.mu.Lock()
			tn.running[g]--
			tn.mu.Unlock()
		}()
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// pickups returns the pickup latencies (first start − send) of the
// messages whose body starts with prefix, sorted, and how many did not
// start.
func (tn *tenants) pickups(prefix string) (lat []time.Duration, missing int) {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	for body, sent := range tn.sent {
		if !strings.HasPrefix(body, prefix) {
			continue
		}
		started, ok := tn.started[body]
		if !ok {
			missing++
			continue
		}
		lat = append(lat, started.Sub(sent))
	}
	slices.Sort(lat)
	return lat, missing
}

func p99(lat []time.Duration) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	return lat[(len(lat)*99+99)/100-1]
}

// noisyTenant: one consumer of 16 handlers; tenant A sends a jobs of
// 100 ms, then ten tenants send 20 each while A drains: at once (burst),
// or one each every 500 ms, 20 a second in all. With skip the consumer's
// receives skip A while its room to wait is full (memmailbox is a
// sqsloop.GroupSkipper); without, A's messages are received and deferred.
// It returns the record once every job ran, and the consumer's Stats.
func noisyTenant(t *testing.T, a, groupLimit int, burst, skip bool, spec sqsloop.QueueSpec) (*tenants, Stats) {
	q := newQueue(t, spec)
	tn := newTenants()
	cfg := fast()
	cfg.Concurrency = 16
	cfg.GroupLimit = groupLimit
	if groupLimit > 0 && !skip {
		// A GroupOf of its own: the receive cannot skip the busy group (as
		// on SQS), so its messages are received and deferred.
		cfg.GroupOf = func(m *sqsloop.Message) string { return m.MessageGroupID }
	}
	c := mustNew(t, q, tn.handler(100*time.Millisecond), cfg)
	stop := start(t, c)
	tn.send(t, q, "A", a)
	for round := range 20 {
		for i := range 10 {
			if burst {
				tn.send(t, q, fmt.Sprint("t", i), 20)
			} else {
				tn.sendOne(t, q, fmt.Sprint("t", i), round)
			}
		}
		if burst {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	total := a + 200
	for {
		time.Sleep(time.Second)
		tn.mu.Lock()
		n := len(tn.started)
		tn.mu.Unlock()
		if n == total {
			break
		}
	}
	synctest.Wait()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	return tn, c.Stats()
}

// The noisy tenant (issue 29): with GroupLimit 4, the ten quiet tenants'
// messages start within a second (p99) while A still drains, A never runs
// more than 4 at once, every message runs once, and A's excess goes back
// to the queue (deferred) rather than failing. Without the limit the quiet
// tenants wait behind A's backlog. A burst of the quiet tenants' 200 jobs
// at once is logged: 12 free handlers take 1.7 s to start them all.
func TestGroupLimitServesQuietTenantsWhileOneFloods(t *testing.T) {
	const a = 1000 // 25 s of A's work at 4 at a time
	deferred := map[string]int64{}
	for _, tc := range []struct {
		name        string
		limit       int
		burst, skip bool
	}{{"limit 4", 4, false, true}, {"limit 4, no skip", 4, false, false}, {"no limit", 0, false, false}, {"limit 4, burst", 4, true, true}} {
		synctest.Test(t, func(t *testing.T) {
			tn, st := noisyTenant(t, a, tc.limit, tc.burst, tc.skip, sqsloop.QueueSpec{})
			deferred[tc.name] = st.Deferred
			lat, missing := tn.pickups("t")
			t.Logf("%s: quiet tenants' pickup p50 %v p99 %v max %v; A's messages deferred %d times (%.2f a message), waits %d",
				tc.name, lat[len(lat)/2], p99(lat), lat[len(lat)-1], st.Deferred, float64(st.Deferred)/a, st.Waited)
			switch {
			case tc.burst:
			case tc.limit == 0:
				if p99(lat) < 5*time.Second {
					t.Errorf("no GroupLimit: quiet tenants' pickup p99 %v, want them behind A's backlog", p99(lat))
				}
				return
			case missing > 0 || p99(lat) >= time.Second:
				t.Errorf("GroupLimit 4: quiet tenants' pickup p99 %v (%d not started), want < 1s", p99(lat), missing)
			}
			if tn.most["A"] > 4 {
				t.Errorf("A ran %d at once, want at most its GroupLimit 4", tn.most["A"])
			}
			for body, n := range tn.runs {
				if n != 1 {
					t.Errorf("%s ran %d times, want once", body, n)
				}
			}
			if st.Failed != 0 || st.Deferred == 0 || st.Succeeded != a+200 {
				t.Errorf("stats: %d failed, %d deferred, %d succeeded; want 0 failed, some deferred, %d succeeded", st.Failed, st.Deferred, st.Succeeded, a+200)
			}
		})
	}
	if deferred["limit 4"]*2 > deferred["limit 4, no skip"] {
		t.Errorf("A's messages deferred %d times with receives skipping A, %d without: want the skip to save at least half",
			deferred["limit 4"], deferred["limit 4, no skip"])
	}
}

// A limit never sends a message to the dead-letter queue: on a queue with
// maxReceiveCount 4, a message over its group's limit is deferred only
// while it has been received fewer than 2 times (half the receives), then
// waits in its lease; every message runs, none is dead-lettered. (The
// receive does not skip the busy group here: the deferrals are the
// point.)
func TestGroupLimitNeverDeadLetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn, st := noisyTenant(t, 300, 2, false, false, sqsloop.QueueSpec{MaxReceiveCount: 4})
		for body, n := range tn.runs {
			if n != 1 {
				t.Errorf("%s ran %d times, want once", body, n)
			}
		}
		if st.Failed != 0 || st.Succeeded != 500 {
			t.Errorf("stats: %d failed, %d succeeded; want 0 and 500", st.Failed, st.Succeeded)
		}
		t.Logf("deferred %d, waited %d", st.Deferred, st.Waited)
	})
}

// rateRun runs procs consumers (as processes) of one queue sharing store,
// each with a limit of 50 a second on every message, for d of a backlog
// of 100 ms jobs, and returns the handler starts.
func rateRun(t *testing.T, procs int, d time.Duration, store jobstate.RateLimiter, spec sqsloop.QueueSpec) ([]time.Time, []Stats) {
	q := newQueue(t, spec)
	var mu sync.Mutex
	var starts []time.Time
	h := func(ctx context.Context, m *sqsloop.Message) error {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		return nil
	}
	send(t, q, bodies(int(60*d/time.Second)+500)...)
	var stops []func() error
	var cs []*Consumer
	for range procs {
		cfg := fast()
		cfg.Concurrency = 16
		cfg.RateLimits = []RateLimit{{Name: "all", Rate: 50, Per: time.Second, Store: store}}
		c := mustNew(t, q, h, cfg)
		cs = append(cs, c)
		stops = append(stops, start(t, c))
	}
	time.Sleep(d)
	var st []Stats
	for i, stop := range stops {
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		st = append(st, cs[i].Stats())
	}
	return starts, st
}

// A rate limit of 50 a second kept by one store for 3 consumers (as 3
// processes): 50 a second in all (within 5 %), no second above 60, and no
// message failed or deferred for it: each waited in its lease.
func TestRateLimitAcrossConsumers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const d = 20 * time.Second
		starts, st := rateRun(t, 3, d, &jobstate.Memory{}, sqsloop.QueueSpec{MaxReceiveCount: 5})
		begin := starts[0]
		perSecond := map[int]int{}
		for _, s := range starts {
			perSecond[int(s.Sub(begin)/time.Second)]++
		}
		rate := float64(len(starts)) / d.Seconds()
		if rate < 47.5 || rate > 52.5 {
			t.Errorf("%d starts in %v: %.1f a second, want 50 ± 5 %%", len(starts), d, rate)
		}
		for sec, n := range perSecond {
			if n > 60 {
				t.Errorf("second %d had %d starts, want at most 60", sec, n)
			}
		}
		for i, s := range st {
			if s.Failed != 0 || s.Deferred != 0 {
				t.Errorf("consumer %d: %d failed, %d deferred; want none", i, s.Failed, s.Deferred)
			}
		}
		t.Logf("%.2f a second; consumer 1: waited %d, deferred %d", rate, st[0].Waited, st[0].Deferred)
	})
}

// Back-pressure: keys x, y and z limited to 10 a second each; 20 s in, a
// handler returns SlowDown for x, pausing it for 30 s: the other keys'
// throughput does not change (within 10 %), and x's messages start again
// only after the pause, at their rate.
func TestSlowDownSlowsOneKeyOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		var mu sync.Mutex
		starts := map[string][]time.Time{}
		slowed := false
		var pausedAt time.Time
		h := func(ctx context.Context, m *sqsloop.Message) error {
			k := m.MessageGroupID
			mu.Lock()
			starts[k] = append(starts[k], time.Now())
			first := k == "x" && !slowed && len(starts["x"]) == 200
			if first {
				slowed, pausedAt = true, time.Now()
			}
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			if first {
				return sqsloop.SlowDown(errors.New("429"), 30*time.Second)
			}
			return nil
		}
		var out []sqsloop.OutgoingMessage
		for i := range 3000 {
			out = append(out, sqsloop.OutgoingMessage{Body: fmt.Sprint(i), MessageGroupID: []string{"x", "y", "z"}[i%3]})
		}
		for len(out) > 0 {
			n := min(len(out), 10)
			if _, err := q.Send(t.Context(), out[:n]); err != nil {
				t.Fatal(err)
			}
			out = out[n:]
		}
		cfg := fast()
		cfg.Concurrency = 8
		cfg.RateLimits = []RateLimit{{Name: "tenant", Key: func(m *sqsloop.Message) string { return m.MessageGroupID }, Rate: 10, Per: time.Second}}
		c := mustNew(t, q, h, cfg)
		stop := start(t, c)
		time.Sleep(70 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		count := func(k string, from, to time.Duration) int {
			n := 0
			for _, s := range starts[k] {
				if d := s.Sub(pausedAt); d >= from && d < to {
					n++
				}
			}
			return n
		}
		for _, k := range []string{"y", "z"} {
			before, during := count(k, -10*time.Second, 0), count(k, 0, 10*time.Second)
			if diff := float64(during-before) / float64(before); diff < -0.1 || diff > 0.1 {
				t.Errorf("key %s: %d starts in the 10 s before the pause, %d in the 10 s after: want within 10 %%", k, before, during)
			}
		}
		if n := count("x", time.Millisecond, 30*time.Second); n != 0 {
			t.Errorf("key x: %d starts during its 30 s pause, want none", n)
		}
		if n := count("x", 30*time.Second, 40*time.Second); n < 90 {
			t.Errorf("key x: %d starts in the 10 s after its pause, want its rate again (about 100)", n)
		}
		if st := c.Stats(); st.SlowedDown != 1 || st.Failed != 0 {
			t.Errorf("stats: %d slowed down, %d failed; want 1 and 0", st.SlowedDown, st.Failed)
		}
	})
}

// The drain gives back at once the messages waiting for a limit: none is
// left hidden but those deferred before it (hidden for their delay).
func TestDrainGivesBackWaitingMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(100)...)
		cfg := fast()
		cfg.RateLimits = []RateLimit{{Name: "slow", Rate: 1, Per: time.Second}}
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error { return nil }, cfg)
		stop := start(t, c)
		time.Sleep(5 * time.Second)
		if w := c.Stats().Waited; w == 0 {
			t.Fatal("no message waited for the limit")
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		st, cs := q.Stats(), c.Stats()
		if st.InFlight != int(cs.Deferred) || st.Visible+int(cs.Succeeded+cs.Deferred) != 100 {
			t.Errorf("after the drain: %+v, %d succeeded, %d deferred; want every message visible again, done, or hidden by its deferral", st, cs.Succeeded, cs.Deferred)
		}
	})
}

// Config checks the limits' fields, each named.
func TestLimitsValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{GroupLimit: -1}, "GroupLimit"},
		{Config{GroupLimit: 11}, "GroupLimit"},
		{Config{GroupOf: func(*sqsloop.Message) string { return "" }}, "GroupOf"},
		{Config{RateLimits: []RateLimit{{Rate: 1, Per: time.Second}}}, "RateLimits[0].Name"},
		{Config{RateLimits: []RateLimit{{Name: "a", Rate: 1, Per: time.Second}, {Name: "a", Rate: 1, Per: time.Second}}}, "RateLimits[1].Name"},
		{Config{RateLimits: []RateLimit{{Name: "a", Per: time.Second}}}, "RateLimits[0].Rate"},
		{Config{RateLimits: []RateLimit{{Name: "a", Rate: 1}}}, "RateLimits[0].Per"},
		{Config{RateLimits: []RateLimit{{Name: "a", Rate: 1, Per: time.Second, Burst: -1}}}, "RateLimits[0].Burst"},
		{Config{RateLimits: []RateLimit{{Name: "a", Rate: 10, Per: time.Nanosecond}}}, "RateLimits[0]"},
	} {
		err := tc.cfg.Validate()
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(fmt.Sprint(err), tc.field) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
}

// A slow limit, 10 a minute, over a backlog of 100 (10 minutes of turns):
// the messages whose turn is more than a minute off go back to the queue
// for their wait, at least a minute, so that a message's receive count
// grows by at most one per minute it waited; none is dead-lettered
// (maxReceiveCount 6) and every one runs once, at the limit's pace.
func TestRateLimitLongWaitsGrowReceiveCountSlowly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b memmailbox.Broker
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 6})
		if err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		send(t, q, bodies(100)...)
		var mu sync.Mutex
		var starts []time.Time
		counts := map[string]int{}
		worst := 0.0
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			defer mu.Unlock()
			starts = append(starts, time.Now())
			counts[m.Body]++
			if waited := time.Since(sent).Minutes(); m.ReceiveCount > 1 {
				worst = max(worst, float64(m.ReceiveCount-1)/waited)
			}
			if m.ReceiveCount-1 > int(time.Since(sent)/time.Minute) {
				t.Errorf("%s: receive count %d after %v of waiting", m.Body, m.ReceiveCount, time.Since(sent))
			}
			return nil
		}, func() Config {
			cfg := fast()
			cfg.Concurrency = 4
			cfg.RateLimits = []RateLimit{{Name: "slow", Rate: 10, Per: time.Minute}}
			return cfg
		}())
		stop := start(t, c)
		time.Sleep(11 * time.Minute)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(counts) != 100 {
			t.Errorf("%d of 100 messages ran in 11 minutes at 10 a minute", len(counts))
		}
		for body, n := range counts {
			if n != 1 {
				t.Errorf("%s ran %d times", body, n)
			}
		}
		for i := 1; i < len(starts); i++ {
			if d := starts[i].Sub(starts[i-1]); d < 6*time.Second-time.Millisecond {
				t.Errorf("starts %d and %d %v apart, want the limit's 6 s", i, i+1, d)
				break
			}
		}
		if st := b.Queue("jobs-dlq").Stats(); st.Visible != 0 {
			t.Errorf("%d messages dead-lettered", st.Visible)
		}
		st := c.Stats()
		t.Logf("deferred %d, waits %d; the most a receive count grew: %.2f per minute waited", st.Deferred, st.Waited, worst)
	})
}
