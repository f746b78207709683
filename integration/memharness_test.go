package integration

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// memHarness gives the end-to-end tests memmailbox queues, each scenario in
// a testing/synctest bubble (virtual time), each queue in a Broker of its
// own. It is the harness of memmailbox's own conformance test
// (memmailbox/conformance_test.go), made again here because a test file of
// another module cannot be imported. The zero value is ready to use; it is
// safe for concurrent use.
type memHarness struct{}

func (memHarness) Name() string { return "memmailbox" }

// Features declares memmailbox's capabilities: everything Amazon SQS has,
// in virtual time.
func (memHarness) Features() mailboxtest.Features {
	return mailboxtest.Features{
		VirtualTime:            true,
		FIFO:                   true,
		DLQ:                    true,
		AttributesReader:       true,
		LeaseCeiling:           true,
		FIFOBatchesWithinGroup: true,
		RedriveKeepsMessageID:  true,
		OmitsUnaskedAttributes: true,
	}
}

// Run runs body in a synctest bubble: every wait in it uses the bubble's fake
// clock, which advances only when every goroutine of the bubble is blocked.
func (memHarness) Run(t *testing.T, body func(t *testing.T)) {
	synctest.Test(t, body)
}

// Sleep waits d on the bubble's fake clock (or until ctx is done); inside
// synctest this is deterministic and takes no wall-clock time.
func (memHarness) Sleep(ctx context.Context, d time.Duration) error {
	return sleepCtx(ctx, d)
}

// NewQueue creates a Broker holding the queue "queue" (and its DLQ
// "queue-dlq" when opts.MaxReceiveCount > 0; both with the ".fifo" suffix for
// a FIFO queue). Call it inside Run's bubble, from the test's goroutine (it
// may call t.Fatal), so that the queue's timers use the bubble's clock.
// cleanup closes the Broker, which closes every handle.
func (memHarness) NewQueue(ctx context.Context, t testing.TB, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
	t.Helper()
	b := memmailbox.NewBroker()
	name := "queue"
	if opts.FIFO {
		name += ".fifo"
	}
	cfg := memmailbox.QueueConfig{
		VisibilityTimeout:         opts.VisibilityTimeout,
		Delay:                     opts.Delay,
		FIFO:                      opts.FIFO,
		ContentBasedDeduplication: opts.ContentBasedDeduplication,
	}
	var q mailboxtest.Queue
	if opts.MaxReceiveCount > 0 {
		dlqName := "queue-dlq"
		if opts.FIFO {
			dlqName += ".fifo"
		}
		dlq, err := b.CreateQueue(dlqName, memmailbox.QueueConfig{FIFO: opts.FIFO})
		if err != nil {
			_ = b.Close()
			t.Fatalf("memmailbox: creating DLQ: %v", err)
		}
		q.DLQ, q.DeadLetterQueue = dlq, dlqName
		cfg.MaxReceiveCount, cfg.DeadLetterQueue = opts.MaxReceiveCount, dlqName
	}
	mb, err := b.CreateQueue(name, cfg)
	if err != nil {
		_ = b.Close()
		t.Fatalf("memmailbox: creating queue: %v", err)
	}
	q.Mailbox = mb
	return q, func() { _ = b.Close() }
}

// sleepCtx waits d, or until ctx is done (returning ctx's error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
