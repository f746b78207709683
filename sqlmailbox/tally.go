package sqlmailbox

import (
	"context"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// tallyDelay is how long a Store holds the acks it counted before it adds
// them to the database's tally (Store.LeaseStats): one statement a second
// at most, instead of a row update in every ack's statement, which cost
// about a tenth of the database's CPU per message in riverbench.
const tallyDelay = time.Second

// ackKey is one row of the acked tally: a queue, an hour (its start, of
// UTC) and a receive count.
type ackKey struct {
	queue int64
	hour  time.Time
	count int
}

// tally counts the messages a Store's Mailboxes acked, by queue, hour and
// receive count, and adds them to the database's tally tallyDelay after
// the first of them (on a goroutine of time.AfterFunc's that close waits
// for), before a LeaseStats of the same Store, and at Close. A process that
// dies loses the counts it held: at most tallyDelay of its acks, in a
// statistic. Safe for concurrent use.
type tally struct {
	add func(ctx context.Context, counts []driver.AckedCount) error

	mu      sync.Mutex
	pending map[ackKey]int64
	timer   *time.Timer // the flush due, nil when none is
	closed  bool
	wg      sync.WaitGroup // the timer's flush
	flushMu sync.Mutex     // one flush at a time, so counts are added once
}

// acked counts the messages of queue acked at now with the receive
// counts given; with none it does nothing (no flush is due).
func (t *tally) acked(queue int64, now time.Time, counts []int) {
	if len(counts) == 0 {
		return
	}
	hour := now.UTC().Truncate(time.Hour)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if t.pending == nil {
		t.pending = map[ackKey]int64{}
	}
	for _, c := range counts {
		t.pending[ackKey{queue, hour, c}]++
	}
	if t.timer == nil {
		t.wg.Add(1)
		t.timer = time.AfterFunc(tallyDelay, func() {
			defer t.wg.Done()
			t.mu.Lock()
			t.timer = nil
			t.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = t.flush(ctx) // on failure the counts wait for the next flush
		})
	}
}

// flush adds the counts held to the database; on failure it keeps them
// for the next flush and returns the database's error.
func (t *tally) flush(ctx context.Context) error {
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	t.mu.Lock()
	held := t.pending
	t.pending = nil
	t.mu.Unlock()
	if len(held) == 0 {
		return nil
	}
	counts := make([]driver.AckedCount, 0, len(held))
	for k, n := range held {
		counts = append(counts, driver.AckedCount{QueueID: k.queue, Hour: k.hour, ReceiveCount: k.count, Messages: n})
	}
	err := t.add(ctx, counts)
	if err != nil {
		t.mu.Lock()
		if t.pending == nil {
			t.pending = held
		} else {
			for k, n := range held {
				t.pending[k] += n
			}
		}
		t.mu.Unlock()
	}
	return err
}

// close stops the timer, waits for a flush it started, and adds what is
// still held (with a 5 s budget); acked counts nothing after it.
func (t *tally) close() {
	t.mu.Lock()
	t.closed = true
	if t.timer != nil && t.timer.Stop() {
		t.wg.Done()
	}
	t.timer = nil
	t.mu.Unlock()
	t.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.flush(ctx)
}
