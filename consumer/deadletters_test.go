package consumer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// countingOpener is a memmailbox queue whose OpenDeadLetterQueue calls are
// counted, and fail with err while it is set.
type countingOpener struct {
	*memmailbox.Queue
	mu    sync.Mutex
	opens int
	err   error
}

func (c *countingOpener) OpenDeadLetterQueue(ctx context.Context) (sqsloop.Mailbox, error) {
	c.mu.Lock()
	c.opens++
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return c.Queue.OpenDeadLetterQueue(ctx)
}

// plainMailbox hides a queue's OpenDeadLetterQueue: a Mailbox that cannot
// name its dead-letter queue.
type plainMailbox struct{ sqsloop.Mailbox }

// DeadLetters opens the dead-letter queue once and keeps it; a transient
// failure to open it is tried again at the next Copy; a queue without a
// redrive policy, or a Mailbox that cannot name its DLQ, is an error
// wrapping ErrNoDeadLetterQueue that names it, remembered without a
// second call.
func TestDeadLetters(t *testing.T) {
	synctest.Test(t, testDeadLetters)
}

func testDeadLetters(t *testing.T) {
	b := memmailbox.NewBroker()
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	m := &sqsloop.Message{ID: "id-1", Body: "b", ReceiveCount: 1}
	src := &countingOpener{Queue: q, err: errors.New("connection reset")}
	d := NewDeadLetters(src)
	if err := d.Copy(t.Context(), m, errors.New("bad")); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("Copy with the DLQ unreachable: %v, want the open error", err)
	}
	src.err = nil
	for range 2 {
		if err := d.Copy(t.Context(), m, errors.New("bad")); err != nil {
			t.Fatal(err)
		}
	}
	if src.opens != 2 {
		t.Errorf("%d opens, want 2 (the failed one, then one kept)", src.opens)
	}
	if n := len(receiveAll(t, b.Queue("jobs-dlq"))); n != 2 {
		t.Errorf("the DLQ holds %d copies, want 2", n)
	}

	plain, err := b.CreateQueue(sqsloop.QueueSpec{Name: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	none := &countingOpener{Queue: plain}
	d = NewDeadLetters(none)
	for range 2 {
		if err := d.Copy(t.Context(), m, errors.New("bad")); !errors.Is(err, sqsloop.ErrNoDeadLetterQueue) || !strings.Contains(err.Error(), `"plain"`) {
			t.Errorf("Copy without a redrive policy: %v, want ErrNoDeadLetterQueue naming the queue", err)
		}
	}
	if none.opens != 1 {
		t.Errorf("%d opens of a queue without a redrive policy, want 1", none.opens)
	}
	err = NewDeadLetters(plainMailbox{q}).Copy(t.Context(), m, errors.New("bad"))
	if !errors.Is(err, sqsloop.ErrNoDeadLetterQueue) || !strings.Contains(err.Error(), "consumer.plainMailbox") {
		t.Errorf("Copy with a Mailbox that cannot name its DLQ: %v, want ErrNoDeadLetterQueue naming its type", err)
	}
}
