package sqlmailbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// tallyDB stands for the database's acked tally: it sums what adds bring,
// or fails them while failing is set.
type tallyDB struct {
	mu      sync.Mutex
	failing bool
	adds    int // calls, failed ones included
	rows    map[ackKey]int64
}

func (d *tallyDB) add(_ context.Context, counts []driver.AckedCount) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.adds++
	if d.failing {
		return errors.New("connection refused")
	}
	if d.rows == nil {
		d.rows = map[ackKey]int64{}
	}
	for _, c := range counts {
		d.rows[ackKey{c.QueueID, c.Hour, c.ReceiveCount}] += c.Messages
	}
	return nil
}

// state returns the calls so far and the rows, sorted, as text.
func (d *tallyDB) state() (int, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var rows []string
	for k, n := range d.rows {
		rows = append(rows, fmt.Sprintf("q%d %s rc%d: %d", k.queue, k.hour.Format("15h"), k.count, n))
	}
	slices.Sort(rows)
	return d.adds, fmt.Sprint(rows)
}

// A Store's acks reach the database's tally in one add tallyDelay after the
// first of them, summed by queue, hour and receive count; an ack of
// nothing starts no flush; a failed add keeps its counts for the next
// flush (here, Close's), which adds them once; acks after Close count
// nothing.
func TestTallyFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &tallyDB{}
		tl := &tally{add: db.add}
		at := time.Date(2026, 11, 26, 9, 59, 59, 0, time.UTC)

		tl.acked(1, at, nil)
		tl.mu.Lock()
		due := tl.timer != nil
		tl.mu.Unlock()
		if due {
			t.Fatal("an ack of no message started a flush")
		}

		tl.acked(1, at, []int{1, 1, 2})
		tl.acked(2, at, []int{1})
		tl.acked(1, at.Add(time.Second), []int{1}) // the next hour
		time.Sleep(tallyDelay - time.Millisecond)
		if adds, _ := db.state(); adds != 0 {
			t.Fatalf("%d adds before tallyDelay passed, want none", adds)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		const first = "[q1 09h rc1: 2 q1 09h rc2: 1 q1 10h rc1: 1 q2 09h rc1: 1]"
		if adds, rows := db.state(); adds != 1 || rows != first {
			t.Fatalf("after tallyDelay: %d adds, tally %s; want 1 add, %s", adds, rows, first)
		}

		db.mu.Lock()
		db.failing = true // no flush runs now: none is due
		db.mu.Unlock()
		tl.acked(1, at, []int{1})
		time.Sleep(tallyDelay)
		synctest.Wait()
		if adds, rows := db.state(); adds != 2 || rows != first {
			t.Fatalf("after a failed add: %d adds, tally %s; want 2 adds, %s", adds, rows, first)
		}
		db.mu.Lock()
		db.failing = false
		db.mu.Unlock()
		tl.acked(1, at, []int{3})
		tl.close()
		const closed = "[q1 09h rc1: 3 q1 09h rc2: 1 q1 09h rc3: 1 q1 10h rc1: 1 q2 09h rc1: 1]"
		if adds, rows := db.state(); adds != 3 || rows != closed {
			t.Fatalf("after close: %d adds, tally %s; want 3 adds, %s (the failed add's count and the new one, in one add)", adds, rows, closed)
		}

		tl.acked(1, at, []int{1})
		time.Sleep(2 * tallyDelay)
		if adds, rows := db.state(); adds != 3 || rows != closed {
			t.Fatalf("an ack after close: %d adds, tally %s; want nothing added", adds, rows)
		}
	})
}
