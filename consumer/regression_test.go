package consumer

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// hangingMailbox: extension calls (Timeout > 0) hang until release closes.
type hangingMailbox struct {
	sqsloop.Mailbox
	release chan struct{}
}

func (h *hangingMailbox) ChangeVisibility(ctx context.Context, ch []sqsloop.VisibilityChange) ([]error, error) {
	if ch[0].Timeout > 0 {
		select { // a black-holed connection: the SDK has no overall timeout
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Mailbox.ChangeVisibility(ctx, ch)
}

func TestHungExtensionDoesNotHoldRunPastTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, "a")
		mb := &hangingMailbox{Mailbox: q, release: make(chan struct{})}
		cfg := fast()
		cfg.ShutdownTimeout = 5 * time.Second
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			heartbeat.Beat(ctx)
			time.Sleep(1500 * time.Millisecond) // the extension at 1 s is in flight
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(2 * time.Second)
		ret := make(chan error, 1)
		go func() { ret <- stop() }()
		select {
		case <-ret:
		case <-time.After(time.Hour):
			t.Errorf("Run has not returned 1h (virtual) after shutdown; ShutdownTimeout is 5s. Stats %+v", c.Stats())
			close(mb.release)
			<-ret
		}
	})
}

func TestShutdownWithADoneContextStillGivesBackUnstarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, bodies(20)...)
		mb := &lateMailbox{Mailbox: q, release: make(chan struct{})}
		cfg := fast()
		cfg.Concurrency = 20
		c := mustNew(t, mb, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, 10*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, cfg)
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = c.Shutdown(done) // e.g. a LoopGroup whose shutdown deadline already passed
		<-runErr
		// 10 unstarted, and 10 in flight interrupted by the done context.
		if st := c.Stats(); st.GivenBack != 20 || st.Started != 10 {
			t.Errorf("stats %+v: want the 10 unstarted and the 10 interrupted given back", st)
		}
		if qs := q.Stats(); qs.Visible != 20 {
			t.Errorf("queue %+v: want all 20 visible again", qs)
		}
	})
}

// FIFO: a run of one group's messages; short handlers that never beat
// (allowed: each finishes well inside the visibility timeout).
func TestFIFOMessagesWaitingBehindTheirGroupKeepTheirLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{FIFO: true, ContentBasedDeduplication: true})
		var out []sqsloop.OutgoingMessage
		for i := range 4 {
			out = append(out, sqsloop.OutgoingMessage{Body: string(rune('a' + i)), MessageGroupID: "g"})
		}
		if _, err := q.Send(t.Context(), out); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		handled := map[string]int{}
		busy, overlap := 0, 0
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			handled[m.Body]++
			busy++
			if busy > 1 {
				overlap++
			}
			mu.Unlock()
			time.Sleep(2 * time.Second) // < 3 s visibility timeout
			mu.Lock()
			busy--
			mu.Unlock()
			return nil
		}, fast())
		stop := start(t, c)
		time.Sleep(30 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		st := c.Stats()
		t.Logf("handled=%v overlap=%d stats: Received=%d Redelivered=%d Acked=%d AckFailed=%d LeasesLost=%d",
			handled, overlap, st.Received, st.Redelivered, st.Acked, st.AckFailed, st.LeasesLost)
		if st.LeasesLost != 0 || st.Redelivered != 0 || overlap != 0 {
			t.Errorf("messages waiting behind their group's head lost their leases")
		}
	})
}

// greedyMailbox ignores MaxMessages (a buggy or hand-written Mailbox).
type greedyMailbox struct{ sqsloop.Mailbox }

func (g greedyMailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	req.MaxMessages = 10
	return g.Mailbox.Receive(ctx, req)
}

func TestOverfullReceiveIsGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{})
		send(t, q, bodies(30)...)
		cfg := fast()
		cfg.Concurrency = 2
		c := mustNew(t, greedyMailbox{q}, func(ctx context.Context, m *sqsloop.Message) error {
			time.Sleep(100 * time.Millisecond)
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(10 * time.Second)
		ret := make(chan error, 1)
		go func() { ret <- stop() }()
		select {
		case <-ret:
		case <-time.After(time.Hour):
			t.Fatalf("Run hung; stats %+v", c.Stats())
		}
		if st := c.Stats(); st.Acked != 30 || st.Started != 30 {
			t.Fatalf("stats %+v: want all 30 handled once and acked", st)
		}
	})
}

// Shutdown gives back at once the FIFO messages waiting behind a running
// one of their group, and Running() turns false as soon as it begins.
func TestShutdownGivesBackWaitingFIFOMessagesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, memmailbox.QueueConfig{FIFO: true, ContentBasedDeduplication: true})
		var out []sqsloop.OutgoingMessage
		for i := range 4 {
			out = append(out, sqsloop.OutgoingMessage{Body: string(rune('a' + i)), MessageGroupID: "g"})
		}
		if _, err := q.Send(t.Context(), out); err != nil {
			t.Fatal(err)
		}
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			return beatFor(ctx, 5*time.Second, time.Second, func() { heartbeat.Beat(ctx) })
		}, fast())
		runErr := make(chan error, 1)
		go func() { runErr <- c.Run(context.Background()) }()
		time.Sleep(time.Second)
		if st := q.Stats(); st.InFlight != 4 {
			t.Fatalf("queue %+v: want the group's 4 messages received", st)
		}
		shutdown := make(chan error, 1)
		go func() { shutdown <- c.Shutdown(context.Background()) }()
		synctest.Wait()
		if c.Running() {
			t.Fatal("Running() = true once shutdown began")
		}
		if st := q.Stats(); st.InFlight != 1 || st.Returned != 3 {
			t.Fatalf("queue %+v: want the 3 waiting messages given back at once", st)
		}
		if err := <-shutdown; err != nil {
			t.Fatal(err)
		}
		<-runErr
		if st := c.Stats(); st.Acked != 1 || st.Started != 1 || st.GivenBack != 3 {
			t.Fatalf("stats %+v: want the running one acked, 3 given back", st)
		}
	})
}
