package producer_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// newQueue sets up spec (named "jobs" unless named) on a broker of its own,
// closed at the end of the test.
func newQueue(t *testing.T, spec sqsloop.QueueSpec) *memmailbox.Queue {
	t.Helper()
	if spec.Name == "" {
		spec.Name = "jobs"
		if spec.FIFO {
			spec.Name += sqsloop.FIFOSuffix
		}
	}
	b := new(memmailbox.Broker)
	t.Cleanup(func() { b.Close() })
	q, err := b.CreateQueue(spec)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// scripted is a Mailbox whose Send calls go through script (when set),
// which may answer instead of the queue; it records every call's size.
type scripted struct {
	sqsloop.Mailbox
	mu     sync.Mutex
	calls  []int // entries of each Send call
	script func(n int, msgs []sqsloop.OutgoingMessage) (res []sqsloop.SendResult, err error, answered bool)
}

func (s *scripted) Send(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	s.mu.Lock()
	s.calls = append(s.calls, len(msgs))
	n, script := len(s.calls), s.script
	s.mu.Unlock()
	if script != nil {
		if res, err, ok := script(n, msgs); ok {
			return res, err
		}
	}
	return s.Mailbox.Send(ctx, msgs)
}

func (s *scripted) sendCalls() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.calls...)
}

// drain receives and acks everything visible in q, returning the bodies in
// the order received.
func drain(t *testing.T, q sqsloop.Mailbox) []*sqsloop.Message {
	t.Helper()
	ctx := context.Background()
	var all []*sqsloop.Message
	for {
		msgs, err := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return all
		}
		all = append(all, msgs...)
		hs := make([]string, len(msgs))
		for i, m := range msgs {
			hs[i] = m.ReceiptHandle
		}
		if _, err := q.Delete(ctx, hs); err != nil {
			t.Fatal(err)
		}
	}
}

// QueueAttributes passes through, so that the producer can tell the queue's
// type.
func (s *scripted) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	return s.Mailbox.(sqsloop.AttributesReader).QueueAttributes(ctx)
}

// bulky is a scripted Mailbox that is also a sqsloop.BulkSender: each
// SendBulk call goes through bulkScript (when set), which may answer
// instead, else it is stored through the queue's Send, 10 at a time (as a
// database stores it in one transaction); it records every bulk call's
// size.
type bulky struct {
	*scripted
	bulks      []int // entries of each SendBulk call
	bulkScript func(n int, msgs []sqsloop.OutgoingMessage) (res []sqsloop.SendResult, err error, answered bool)
}

func (b *bulky) SendBulk(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	invalid, err := sqsloop.ValidateSendBulk(msgs)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.bulks = append(b.bulks, len(msgs))
	n, script := len(b.bulks), b.bulkScript
	b.mu.Unlock()
	if script != nil {
		if res, err, ok := script(n, msgs); ok {
			return res, err
		}
	}
	res := make([]sqsloop.SendResult, len(msgs))
	for i := range msgs {
		res[i].Err = invalid[i]
	}
	for lo := 0; lo < len(msgs); lo += sqsloop.MaxBatchSize {
		hi := min(lo+sqsloop.MaxBatchSize, len(msgs))
		var idx []int
		var batch []sqsloop.OutgoingMessage
		for i := lo; i < hi; i++ {
			if invalid[i] == nil {
				idx, batch = append(idx, i), append(batch, msgs[i])
			}
		}
		if len(batch) == 0 {
			continue
		}
		out, err := b.scripted.Mailbox.Send(ctx, batch)
		if err != nil {
			return nil, err
		}
		for j, r := range out {
			res[idx[j]] = r
		}
	}
	return res, nil
}

func (b *bulky) bulkCalls() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.bulks...)
}
