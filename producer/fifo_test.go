package producer_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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

// A message group whose message fails for good is paused: the group's
// messages behind it fail with ErrGroupPaused instead of going out of
// order, and so does every later Send to the group, until ResumeGroup; the
// other groups go on. A message withdrawn (its context ended) before its
// turn pauses its group the same way: those behind it would arrive after a
// gap.
func TestFIFOGroupPausesOnFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, ContentBasedDeduplication: true})
		hold := make(chan struct{})
		mb := &scripted{Mailbox: q, script: func(_ int, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			res := make([]sqsloop.SendResult, len(msgs))
			for i, m := range msgs {
				switch m.Body {
				case "g-bad":
					res[i].Err = fmt.Errorf("injected: refused: %w", sqsloop.ErrInvalidArgument)
					continue
				case "k-1":
					<-hold
				}
				r, err := q.Send(context.Background(), msgs[i:i+1])
				if err != nil {
					return nil, err, true
				}
				res[i] = r[0]
			}
			return res, nil, true
		}}
		p := mustNew(t, mb, producer.Config{})
		ctx := context.Background()
		enqueue := func(ctx context.Context, group, body string) *producer.Pending {
			t.Helper()
			pd, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: body, MessageGroupID: group})
			if err != nil {
				t.Fatalf("Enqueue %s: %v", body, err)
			}
			return pd
		}
		wait := func(pd *producer.Pending) error {
			_, err := pd.Wait(ctx)
			return err
		}
		var g []*producer.Pending
		for _, body := range []string{"g-1", "g-bad", "g-3", "g-4"} {
			g = append(g, enqueue(ctx, "g", body))
		}
		h := enqueue(ctx, "h", "h-1")
		if err := wait(g[0]); err != nil {
			t.Fatalf("g-1: %v", err)
		}
		if err := wait(g[1]); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Fatalf("g-bad: %v, want its own refusal", err)
		}
		for i, pd := range g[2:] {
			if err := wait(pd); !errors.Is(err, producer.ErrGroupPaused) || !strings.Contains(err.Error(), `"g"`) {
				t.Errorf("g-%d behind the failed one: %v, want ErrGroupPaused naming the group", i+3, err)
			}
		}
		if _, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "g-5", MessageGroupID: "g"}); !errors.Is(err, producer.ErrGroupPaused) {
			t.Errorf("Send to the paused group: %v, want ErrGroupPaused", err)
		}
		if err := wait(h); err != nil {
			t.Errorf("another group: %v", err)
		}
		if st := p.Stats(); st.PausedGroups != 1 {
			t.Errorf("Stats.PausedGroups %d, want 1", st.PausedGroups)
		}
		p.ResumeGroup("g")
		if _, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "g-6", MessageGroupID: "g"}); err != nil {
			t.Errorf("Send after ResumeGroup: %v", err)
		}

		// Withdrawn before its turn: k-2's context ends while k-1 is on
		// the wire; k-3, behind it, fails; k-1 is sent.
		k1 := enqueue(ctx, "k", "k-1")
		synctest.Wait()
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		k2 := enqueue(short, "k", "k-2")
		k3 := enqueue(ctx, "k", "k-3")
		time.Sleep(time.Second)
		if err := wait(k2); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("k-2: %v, want its context's end", err)
		}
		if err := wait(k3); !errors.Is(err, producer.ErrGroupPaused) {
			t.Errorf("k-3 behind the withdrawn k-2: %v, want ErrGroupPaused", err)
		}
		close(hold)
		if err := wait(k1); err != nil {
			t.Errorf("k-1: %v", err)
		}
		closeOK(t, p)
		var got []string
		for _, m := range drain(t, q) {
			got = append(got, m.Body)
		}
		slices.Sort(got)
		if want := []string{"g-1", "g-6", "h-1", "k-1"}; !slices.Equal(got, want) {
			t.Errorf("received %v, want %v: nothing of a group after its failure until ResumeGroup", got, want)
		}
		if st := p.Stats(); st.PausedGroups != 1 || st.Pending != 0 {
			t.Errorf("stats %+v, want k paused, nothing pending", st)
		}
	})
}

// attrsHang is a Mailbox whose QueueAttributes waits until its context ends.
type attrsHang struct {
	sqsloop.Mailbox
	mu    sync.Mutex
	calls int
}

func (a *attrsHang) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	<-ctx.Done()
	return sqsloop.QueueAttributes{}, ctx.Err()
}

// The first grouped Enqueue asks the queue its type under its own context:
// when that ends first, Enqueue returns its error then, not after the 5 s
// the question may take; the next grouped Enqueue asks again, and one
// that cannot tell keeps the group's order.
func TestOrderProbeHonoursTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, ContentBasedDeduplication: true})
		mb := &attrsHang{Mailbox: q}
		p := mustNew(t, mb, producer.Config{})
		start := time.Now()
		short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := p.Enqueue(short, sqsloop.OutgoingMessage{Body: "a", MessageGroupID: "g"})
		if d := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || d != 100*time.Millisecond {
			t.Errorf("Enqueue = %v after %v, want its context's deadline at 100ms", err, d)
		}
		if _, err := p.Send(context.Background(), sqsloop.OutgoingMessage{Body: "b", MessageGroupID: "g"}); err != nil {
			t.Fatal(err)
		}
		mb.mu.Lock()
		calls := mb.calls
		mb.mu.Unlock()
		if d := time.Since(start); calls != 2 || d < 5*time.Second {
			t.Errorf("%d QueueAttributes calls, the second Send after %v; want 2, the second waiting for the 5s bound", calls, d)
		}
		closeOK(t, p)
		if got := drain(t, q); len(got) != 1 || got[0].Body != "b" {
			t.Errorf("received %v, want b only", got)
		}
	})
}
