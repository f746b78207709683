package producer_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/producer"
)

// faulty returns a script failing 30 % of calls (half before the queue,
// half after it applied them: the answer lost) and, of the others, 30 % of
// entries alone.
func faulty(q sqsloop.Mailbox, seed uint64) func(int, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed))
	lost := errors.New("injected: answer lost")
	return func(_ int, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
		mu.Lock()
		whole, after := rng.Float64() < 0.3, rng.IntN(2) == 0
		fail := make([]bool, len(msgs))
		for i := range fail {
			fail[i] = rng.Float64() < 0.3
		}
		mu.Unlock()
		ctx := context.Background()
		if whole {
			if after {
				if _, err := q.Send(ctx, msgs); err != nil {
					return nil, err, true
				}
			}
			return nil, lost, true
		}
		res := make([]sqsloop.SendResult, len(msgs))
		for i := range msgs {
			if fail[i] {
				res[i].Err = errors.New("injected: entry failed")
				continue
			}
			r, err := q.Send(ctx, msgs[i:i+1])
			if err != nil {
				return nil, err, true
			}
			res[i] = r[0]
		}
		return res, nil, true
	}
}

// FIFO: each message group's messages arrive in the order sent, though 30 %
// of calls and entries fail (some after the queue applied them), across
// retries; a FIFO send reports its sequence number. Each group's messages
// are all enqueued before any is waited for, so that many of a group are
// pending at once.
func TestFIFOOrderUnderFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, ContentBasedDeduplication: true})
		mb := &scripted{Mailbox: q, script: faulty(q, 7)}
		p := mustNew(t, mb, producer.Config{MaxAttempts: 50})
		const groups, each = 8, 60
		var wg sync.WaitGroup
		for g := range groups {
			wg.Go(func() {
				var pds []*producer.Pending
				for i := range each {
					pd, err := p.Enqueue(context.Background(), sqsloop.OutgoingMessage{Body: fmt.Sprintf("g%d-%03d", g, i), MessageGroupID: fmt.Sprint("g", g)})
					if err != nil {
						t.Errorf("Enqueue: %v", err)
						return
					}
					pds = append(pds, pd)
				}
				for _, pd := range pds {
					res, err := pd.Wait(context.Background())
					if err != nil {
						t.Errorf("Send: %v", err)
					}
					if res.SequenceNumber == "" {
						t.Errorf("no sequence number for a FIFO send")
					}
				}
			})
		}
		wg.Wait()
		closeOK(t, p)
		next := map[string]int{}
		got := drain(t, q)
		for _, m := range got {
			if want := fmt.Sprintf("%s-%03d", m.MessageGroupID, next[m.MessageGroupID]); m.Body != want {
				t.Fatalf("group %s: got %s, want %s", m.MessageGroupID, m.Body, want)
			}
			next[m.MessageGroupID]++
		}
		if len(got) != groups*each {
			t.Errorf("received %d messages, want %d (each once: deduplication drops the copies of lost answers)", len(got), groups*each)
		}
		t.Logf("stats %+v", p.Stats())
	})
}

// On a standard queue a MessageGroupID (a fair-queue tenant) holds nothing
// back: one group's messages share batches.
func TestStandardQueueGroupsNotHeldBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q}
		p := mustNew(t, mb, producer.Config{})
		var pds []*producer.Pending
		for i := range 20 {
			pd, err := p.Enqueue(context.Background(), sqsloop.OutgoingMessage{Body: fmt.Sprint(i), MessageGroupID: "tenant-1"})
			if err != nil {
				t.Fatal(err)
			}
			pds = append(pds, pd)
		}
		for _, pd := range pds {
			if _, err := pd.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		closeOK(t, p)
		if calls := mb.sendCalls(); len(calls) != 2 {
			t.Errorf("calls %v, want 2 of 10", calls)
		}
	})
}
