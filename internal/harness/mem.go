package harness

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// Mem runs mailboxtest scenarios, and the end-to-end tests, on memmailbox:
// each scenario in a testing/synctest bubble (virtual time), each queue in a
// Broker of its own. The zero value is ready to use; it is safe for
// concurrent use.
type Mem struct{}

var _ mailboxtest.Harness = Mem{}

// Name returns "memmailbox".
func (Mem) Name() string { return "memmailbox" }

// Features declares memmailbox's capabilities: everything Amazon SQS has,
// in virtual time.
func (Mem) Features() mailboxtest.Features {
	f := sqsFeatures()
	f.VirtualTime = true
	return f
}

// Run runs body in a synctest bubble: every wait in it uses the bubble's fake
// clock, which advances only when every goroutine of the bubble is blocked.
func (Mem) Run(t *testing.T, body func(t *testing.T)) {
	synctest.Test(t, body)
}

// Sleep waits d on the bubble's fake clock, or until ctx is done (returning
// ctx's error); in a bubble it takes no wall-clock time.
func (Mem) Sleep(ctx context.Context, d time.Duration) error { return sleep(ctx, d) }

// NewQueue creates a Broker holding the queue "queue" (and its DLQ
// "queue-dlq" when opts.MaxReceiveCount > 0; both with the ".fifo" suffix for
// a FIFO queue), set up with memmailbox's Broker.CreateQueue. Call it inside
// Run's bubble, from the test's goroutine (it may call t.Fatal), so that the
// queue's timers use the bubble's clock. cleanup closes the Broker, which
// closes every handle.
func (Mem) NewQueue(ctx context.Context, t testing.TB, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
	t.Helper()
	b := new(memmailbox.Broker)
	name := "queue"
	if opts.FIFO {
		name += sqsloop.FIFOSuffix
	}
	spec := Spec(name, opts)
	mb, err := b.CreateQueue(spec)
	if err != nil {
		_ = b.Close()
		t.Fatalf("memmailbox: creating queue: %v", err)
	}
	q := mailboxtest.Queue{Mailbox: mb}
	if opts.MaxReceiveCount > 0 {
		q.DeadLetterQueue = spec.DeadLetterQueueName()
		q.DLQ = b.Queue(q.DeadLetterQueue)
	}
	return q, func() { _ = b.Close() }
}

// Spec returns the sqsloop.QueueSpec of a queue named name that opts
// describe, for a mailbox's queue-setup call.
func Spec(name string, opts mailboxtest.QueueOptions) sqsloop.QueueSpec {
	return sqsloop.QueueSpec{
		Name:                      name,
		FIFO:                      opts.FIFO,
		ContentBasedDeduplication: opts.ContentBasedDeduplication,
		VisibilityTimeout:         opts.VisibilityTimeout,
		Delay:                     opts.Delay,
		MaxReceiveCount:           opts.MaxReceiveCount,
	}
}

// sleep waits d, or until ctx is done (returning ctx's error).
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
