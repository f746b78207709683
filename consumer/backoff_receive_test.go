package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// outage is a mailbox that is down until back: each receive then fails
// after 10 ms (a refused connection), with at most one on the wire at
// once if the consumer probes. It records the most receives on the wire
// at once while down, from a second after the start (when the consumer
// knows receives fail, and the receives of the first burst are back), and
// when the first receive made after back was made.
type outage struct {
	sqsloop.Mailbox
	back time.Time

	mu                  sync.Mutex
	counting            time.Time // receives on the wire are counted from then
	onWire, mostWhileDn int
	firstAfter          time.Time // when the first receive sent after back was made
	shortPolls          int       // receives with WaitTime 0
}

func (o *outage) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	now := time.Now()
	o.mu.Lock()
	if req.WaitTime == 0 {
		o.shortPolls++
	}
	down := now.Before(o.back)
	if down {
		o.onWire++
		if !now.Before(o.counting) {
			o.mostWhileDn = max(o.mostWhileDn, o.onWire)
		}
	} else if o.firstAfter.IsZero() {
		o.firstAfter = now
	}
	o.mu.Unlock()
	if down {
		time.Sleep(10 * time.Millisecond)
		o.mu.Lock()
		o.onWire--
		o.mu.Unlock()
		return nil, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	return o.Mailbox.Receive(ctx, req)
}

// Receiving resumes within a second of the mailbox answering again, and
// Ready follows: a mailbox down for 40 s (past NotReadyAfter, so Ready
// reports it) is back at 40 s; the next receive is made by 41.01 s at the
// latest (the 1 s back-off cap, plus the 10 ms of the receive failing as
// the mailbox came back), it is a short poll (so its answer comes at once
// on an empty queue), Ready is nil as soon as it has answered, and the
// waiting messages run. While the mailbox is down, one receive at a time
// goes out, not one per receive loop. (With the old 10 s cap the gap was
// up to 10 s.)
func TestReceivingResumesWithinASecondOfTheMailboxComingBack(t *testing.T) {
	for seed := range 5 {
		t.Run(fmt.Sprint("run ", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				q := newQueue(t, sqsloop.QueueSpec{})
				mb := &outage{Mailbox: q, back: t0.Add(40 * time.Second), counting: t0.Add(time.Second)}
				var mu sync.Mutex
				handled := 0
				c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error {
					mu.Lock()
					handled++
					mu.Unlock()
					return nil
				}, Config{Concurrency: 16, WaitTime: 20 * time.Second, Logger: quiet})
				stop := start(t, c)
				defer func() {
					if err := stop(); err != nil {
						t.Error(err)
					}
				}()
				time.Sleep(39 * time.Second)
				if err := c.Ready(); err == nil {
					t.Errorf("Ready() = nil with the mailbox down for 39 s")
				}
				send(t, q, bodies(5)...)
				time.Sleep(time.Until(mb.back))
				for c.Ready() != nil && time.Since(mb.back) < time.Minute {
					time.Sleep(time.Millisecond)
				}
				mb.mu.Lock()
				gap, most, short := mb.firstAfter.Sub(mb.back), mb.mostWhileDn, mb.shortPolls
				mb.mu.Unlock()
				ready := time.Since(mb.back)
				t.Logf("first receive %v after the mailbox came back, Ready nil after %v; at most %d receives on the wire while down; %d short polls",
					gap, ready, most, short)
				if gap < 0 || gap > time.Second+10*time.Millisecond {
					t.Errorf("first receive %v after the mailbox came back, want ≤ 1.01s", gap)
				}
				if ready > gap+time.Millisecond {
					t.Errorf("Ready nil %v after the mailbox came back, want as soon as the first receive answered (%v)", ready, gap)
				}
				if most != 1 {
					t.Errorf("%d receives on the wire at once while the mailbox was down, want 1", most)
				}
				time.Sleep(time.Second)
				mu.Lock()
				defer mu.Unlock()
				if handled != 5 {
					t.Errorf("%d of 5 messages handled a second later", handled)
				}
			})
		})
	}
}

// Access denied is not a mailbox coming back: its back-off keeps growing
// to 10 s (an IAM change propagating), while a transient failure's stops
// at 1 s; a success resets both.
func TestDeniedReceivesBackOffLongerThanTransientOnes(t *testing.T) {
	var b receiveBackoff
	denied := fmt.Errorf("x: %w", sqsloop.ErrAccessDenied)
	var ceilings []time.Duration
	for range 6 {
		b.answered(false, denied, true)
		ceilings = append(ceilings, b.next)
	}
	if fmt.Sprint(ceilings) != "[2s 4s 8s 10s 10s 10s]" {
		t.Errorf("denied: next ceilings %v, want doubling from 1 s to 10 s", ceilings)
	}
	b.answered(false, nil, true)
	ceilings = nil
	for range 6 {
		b.answered(false, errors.New("connection refused"), true)
		ceilings = append(ceilings, b.next)
	}
	if fmt.Sprint(ceilings) != "[200ms 400ms 800ms 1s 1s 1s]" {
		t.Errorf("transient: next ceilings %v, want doubling from 100 ms to 1 s", ceilings)
	}
	if d := time.Until(b.until); d > time.Second {
		t.Errorf("a transient failure backs off %v, want ≤ 1 s", d)
	}
}
