package consumer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// flakyReceives fails receives while down is set.
type flakyReceives struct {
	sqsloop.Mailbox
	down atomic.Bool
}

func (f *flakyReceives) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	if f.down.Load() {
		return nil, errors.New("dial tcp: connection refused")
	}
	return f.Mailbox.Receive(ctx, req)
}

// Ready is nil while receiving, turns into the receive error once receives
// have failed for longer than NotReadyAfter (Run goes on retrying), and
// back to nil after a success; it is an error before Run and once
// shutdown begins.
func TestReadyReportsReceivesFailing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mb := &flakyReceives{Mailbox: newQueue(t, sqsloop.QueueSpec{})}
		c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return nil }, fast())
		if c.Ready() == nil {
			t.Fatal("Ready() = nil before Run")
		}
		stop := start(t, c)
		synctest.Wait()
		if err := c.Ready(); err != nil {
			t.Fatalf("Ready() = %v while receiving", err)
		}
		mb.down.Store(true)
		time.Sleep(2 * time.Second) // the current 1 s poll ends, the next fails
		time.Sleep(NotReadyAfter - 5*time.Second)
		if err := c.Ready(); err != nil {
			t.Fatalf("Ready() = %v after less than NotReadyAfter of failures", err)
		}
		time.Sleep(10 * time.Second)
		if err := c.Ready(); err == nil {
			t.Fatal("Ready() = nil after receives failed for longer than NotReadyAfter")
		}
		if !running(c) {
			t.Fatal("a down endpoint must stay transient: Run keeps going")
		}
		mb.down.Store(false)
		time.Sleep(11 * time.Second) // the back-off (≤ 10 s) ends, a receive succeeds
		if err := c.Ready(); err != nil {
			t.Fatalf("Ready() = %v after receives recovered", err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if c.Ready() == nil {
			t.Fatal("Ready() = nil after Run returned")
		}
	})
}
