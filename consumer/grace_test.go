package consumer

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// slowAnswer gives every receive a round trip of rtt, and holds the
// answer of its second receive until release is closed; if the call's
// context ends first, the answer is lost, as an SDK call's is: its
// messages stay in flight in the queue.
type slowAnswer struct {
	sqsloop.Mailbox
	rtt     time.Duration
	calls   atomic.Int32
	release chan struct{}
}

func (s *slowAnswer) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	time.Sleep(s.rtt)
	msgs, err := s.Mailbox.Receive(ctx, req)
	if s.calls.Add(1) == 2 {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return msgs, err
}

// A receive whose answer comes back at shutdown a little later than the
// average round trip (a loaded server) is waited for, and its messages
// are given back, not left hidden for their visibility timeout: the
// grace is twice the measured round trip (one round trip abandoned it).
func TestShutdownWaitsForAReceiveSlowerThanAverage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, bodies(20)...)
		mb := &slowAnswer{Mailbox: q, rtt: 40 * time.Millisecond, release: make(chan struct{})}
		cfg := fast()
		cfg.Concurrency = 20
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, 10*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, cfg)
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		if st := q.Stats(); st.InFlight != 20 || c.Stats().Started != 10 {
			t.Fatalf("before shutdown: queue %+v, consumer %+v; want 20 in flight, 10 started", q.Stats(), c.Stats())
		}
		shutdownErr := make(chan error, 1)
		go func() { shutdownErr <- c.Shutdown(context.Background()) }()
		time.Sleep(60 * time.Millisecond) // 1.5 round trips: the answer arrives
		close(mb.release)
		synctest.Wait()
		if st := q.Stats(); st.Visible != 10 || st.InFlight != 10 {
			t.Fatalf("queue %+v: want the late receive's 10 messages visible again at once (given back), not hidden for their visibility timeout", st)
		}
		if err := <-shutdownErr; err != nil {
			t.Fatal(err)
		}
		<-runErr
	})
}
