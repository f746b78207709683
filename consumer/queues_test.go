package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// busyness records, per queue (a body's prefix before "-"), the handler
// time spent and the handlers running now.
type busyness struct {
	mu      sync.Mutex
	spent   map[string]time.Duration
	running map[string]int
	starts  map[string]int
	lastEnd map[string]time.Time
	from    time.Time // handler time counts from here
}

func newBusyness() *busyness {
	return &busyness{spent: map[string]time.Duration{}, running: map[string]int{}, starts: map[string]int{}, lastEnd: map[string]time.Time{}}
}

// handler runs a message of queue q for took(q).
func (b *busyness) handler(took func(q string) time.Duration) sqsloop.Handler {
	return func(ctx context.Context, m *sqsloop.Message) error {
		q, _, _ := strings.Cut(m.Body, "-")
		b.mu.Lock()
		b.running[q]++
		b.starts[q]++
		b.mu.Unlock()
		began := time.Now()
		time.Sleep(took(q))
		b.mu.Lock()
		defer b.mu.Unlock()
		b.running[q]--
		b.lastEnd[q] = time.Now()
		if !began.Before(b.from) {
			b.spent[q] += time.Since(began)
		}
		return nil
	}
}

func (b *busyness) started(q string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.starts[q]
}

func (b *busyness) lastEndOf(q string) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastEnd[q]
}

func (b *busyness) now(q string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running[q]
}

func sendPrefixed(t *testing.T, q sqsloop.Mailbox, prefix string, n int) {
	t.Helper()
	bs := make([]string, n)
	for i := range bs {
		bs[i] = fmt.Sprint(prefix, "-", i)
	}
	send(t, q, bs...)
}

// Weights (issue 29): high 3, low 1, both full: 75 % ± 5 % of the handler
// time goes to high, whether the two queues' jobs take as long (100 ms)
// or low's three times longer; the lease owner, the drain and the counts
// are one consumer's.
func TestWeightedQueuesShareHandlerTime(t *testing.T) {
	for _, lowJob := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			high, low := newQueue(t, sqsloop.QueueSpec{Name: "high"}), newQueue(t, sqsloop.QueueSpec{Name: "low"})
			sendPrefixed(t, high, "high", 3000)
			sendPrefixed(t, low, "low", 3000)
			b := newBusyness()
			b.from = time.Now().Add(2 * time.Second) // past the start
			cfg := fast()
			cfg.Concurrency = 16
			c, err := NewQueues([]Queue{{Mailbox: high, Weight: 3}, {Mailbox: low, Weight: 1}}, b.handler(func(q string) time.Duration {
				if q == "low" {
					return lowJob
				}
				return 100 * time.Millisecond
			}), cfg)
			if err != nil {
				t.Fatal(err)
			}
			stop := start(t, c)
			time.Sleep(12 * time.Second)
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			b.mu.Lock()
			share := float64(b.spent["high"]) / float64(b.spent["high"]+b.spent["low"])
			b.mu.Unlock()
			if share < 0.70 || share > 0.80 {
				t.Errorf("low's jobs %v: high had %.1f %% of the handler time, want 75 %% ± 5 %%", lowJob, 100*share)
			}
			st := c.Stats()
			if hs, ls := high.Stats(), low.Stats(); st.Acked != int64(hs.Deleted+ls.Deleted) || st.Held != 0 {
				t.Errorf("stats %+v: acked %d, want the queues' %d deleted; held %d after the drain", st, st.Acked, hs.Deleted+ls.Deleted, st.Held)
			}
			t.Logf("low's jobs %v: high had %.1f %% of the handler time", lowJob, 100*share)
		})
	}
}

// High empty: low gets every handler. With high empty from the start, low
// runs 16 at once; when high runs dry, low has all 16 within one receive
// round trip of high's last job ending (memmailbox answers at once: the
// same instant; a receive of high waiting in its long poll gives its
// share back after twice the round trip, at least 20 ms).
func TestWeightedQueuesEmptyHighLeavesLowEveryHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		high, low := newQueue(t, sqsloop.QueueSpec{Name: "high"}), newQueue(t, sqsloop.QueueSpec{Name: "low"})
		sendPrefixed(t, low, "low", 3000)
		b := newBusyness()
		cfg := fast()
		cfg.Concurrency = 16
		c, err := NewQueues([]Queue{{Mailbox: high, Weight: 3}, {Mailbox: low, Weight: 1}},
			b.handler(func(string) time.Duration { return 100 * time.Millisecond }), cfg)
		if err != nil {
			t.Fatal(err)
		}
		stop := start(t, c)
		time.Sleep(50 * time.Millisecond)
		if n := b.now("low"); n != 16 {
			t.Errorf("high empty from the start: low runs %d, want 16", n)
		}
		sendPrefixed(t, high, "high", 300) // 2.5 s of high's work at 12 at a time
		time.Sleep(2 * time.Second)
		if h, l := b.now("high"), b.now("low"); h != 12 || l != 4 {
			t.Errorf("both full: high runs %d, low %d; want 12 and 4", h, l)
		}
		for b.started("high") < 300 || b.now("high") > 0 {
			time.Sleep(time.Millisecond)
		}
		ended := b.lastEndOf("high")
		most := 0
		for time.Since(ended) < 50*time.Millisecond {
			time.Sleep(5 * time.Millisecond)
			synctest.Wait()
			most = max(most, b.now("low"))
		}
		if most != 16 {
			t.Errorf("in the 50 ms after high's last job ended low ran %d at most, want 16", most)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// NewQueues checks its queues, each named.
func TestNewQueuesValidation(t *testing.T) {
	q := newQueue(t, sqsloop.QueueSpec{})
	h := func(context.Context, *sqsloop.Message) error { return nil }
	for _, tc := range []struct {
		qs    []Queue
		field string
	}{
		{nil, "queues"},
		{[]Queue{{}}, "Queues[0].Mailbox"},
		{[]Queue{{Mailbox: q}, {Mailbox: q}}, "Queues[1].Mailbox"},
		{[]Queue{{Mailbox: q, Weight: -1}}, "Queues[0].Weight"},
		{[]Queue{{Mailbox: q, Weight: 1001}}, "Queues[0].Weight"},
	} {
		_, err := NewQueues(tc.qs, h, Config{})
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(fmt.Sprint(err), tc.field) {
			t.Errorf("NewQueues(%v) = %v, want an error naming %s", tc.qs, err, tc.field)
		}
	}
}

// A queue whose last receive came back full, and whose next receive then
// waits in its long poll for nothing: that receive gives its share back
// after twice the round trip (at least 20 ms), not at the end of its wait
// (1 s here). Two queues of weight 1 and 20 handlers: high's receives ask
// for its quota, 10, and its 100 messages come in full receives.
func TestWeightedQueuesLongPollHoldsNoShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		high, low := newQueue(t, sqsloop.QueueSpec{Name: "high"}), newQueue(t, sqsloop.QueueSpec{Name: "low"})
		sendPrefixed(t, low, "low", 3000)
		sendPrefixed(t, high, "high", 100)
		b := newBusyness()
		cfg := fast()
		cfg.Concurrency = 20
		c, err := NewQueues([]Queue{{Mailbox: high}, {Mailbox: low}},
			b.handler(func(string) time.Duration { return 100 * time.Millisecond }), cfg)
		if err != nil {
			t.Fatal(err)
		}
		stop := start(t, c)
		for b.started("high") < 100 || b.now("high") > 0 {
			time.Sleep(time.Millisecond)
		}
		ended := b.lastEndOf("high")
		most := 0
		for time.Since(ended) < 50*time.Millisecond {
			time.Sleep(5 * time.Millisecond)
			synctest.Wait()
			most = max(most, b.now("low"))
		}
		if most != 20 {
			t.Errorf("in the 50 ms after high's last job ended low ran %d at most, want 20", most)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}
