package producer_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/producer"
)

// latency holds each Send call for d, a round trip.
func latency(d time.Duration) func(int, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
	return func(int, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
		time.Sleep(d)
		return nil, nil, false
	}
}

// Sending many from one goroutine: SendAll makes SendMessageBatch calls of
// 10, 8 at once, where Send in a loop waits for each message (its linger
// and its round trip), one call per message. 500 messages with a 9 ms round
// trip: 50 calls against 500, in virtual time 63 ms against 7 s.
func TestSendAllBatches(t *testing.T) {
	const n = 500
	msgs := make([]sqsloop.OutgoingMessage, n)
	for i := range msgs {
		msgs[i] = sqsloop.OutgoingMessage{Body: fmt.Sprint("m", i)}
	}
	var loop, all time.Duration
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q, script: latency(9 * time.Millisecond)}
		p := mustNew(t, mb, producer.Config{})
		start := time.Now()
		for _, m := range msgs {
			if _, err := p.Send(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
		loop = time.Since(start)
		closeOK(t, p)
		if calls := mb.sendCalls(); len(calls) != n {
			t.Errorf("Send in a loop: %d calls for %d messages, want %d (the cost its doc states)", len(calls), n, n)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q, script: latency(9 * time.Millisecond)}
		p := mustNew(t, mb, producer.Config{})
		start := time.Now()
		res, err := p.SendAll(context.Background(), msgs)
		all = time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		closeOK(t, p)
		if calls := mb.sendCalls(); len(calls) != n/10 {
			t.Errorf("SendAll: %d calls for %d messages, want %d", len(calls), n, n/10)
		}
		byBody := map[string]string{}
		for _, m := range drain(t, q) {
			byBody[m.Body] = m.ID
		}
		for i, r := range res {
			if id := byBody[msgs[i].Body]; id == "" || r.MessageID != id {
				t.Errorf("result %d: ID %q, the queue has %s as %q", i, r.MessageID, msgs[i].Body, id)
			}
		}
	})
	t.Logf("%d messages, 9 ms round trips (virtual time): Send in a loop %v, SendAll %v", n, loop, all)
}

// A message that fails does not stop the others: SendAll returns a
// *BatchError with each message's error at its index; errors.Is reaches
// them.
func TestSendAllReportsEachFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		p := mustNew(t, q, producer.Config{})
		res, err := p.SendAll(context.Background(), []sqsloop.OutgoingMessage{{Body: "a"}, {}, {Body: "c"}})
		var be *producer.BatchError
		if !errors.As(err, &be) || be.Failed != 1 || len(be.Errs) != 3 || be.Errs[0] != nil || !errors.Is(be.Errs[1], sqsloop.ErrInvalidArgument) || be.Errs[2] != nil {
			t.Fatalf("SendAll with an empty body second: %v, want a BatchError with message 1 invalid", err)
		}
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || res[0].MessageID == "" || res[1].MessageID != "" || res[2].MessageID == "" {
			t.Errorf("err %v, results %+v: want errors.Is to reach the invalid one, a and c sent", err, res)
		}

		type job struct{ N int }
		res, err = producer.SendAllJSON(context.Background(), p, []job{{1}, {2}}, sqsloop.OutgoingMessage{})
		if err != nil || len(res) != 2 {
			t.Fatalf("SendAllJSON = %v, %v", res, err)
		}
		_, err = producer.SendAllJSON(context.Background(), p, []any{job{3}, make(chan int)}, sqsloop.OutgoingMessage{})
		if !errors.As(err, &be) || be.Failed != 1 || be.Errs[0] != nil || !errors.Is(be.Errs[1], sqsloop.ErrInvalidArgument) {
			t.Errorf("SendAllJSON with a value that does not encode: %v, want it alone to fail", err)
		}
		closeOK(t, p)
		var got []string
		for _, m := range drain(t, q) {
			got = append(got, m.Body)
		}
		if want := []string{"a", "c", `{"N":1}`, `{"N":2}`, `{"N":3}`}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("received %q, want %q", got, want)
		}
	})
}

// To a Mailbox that is a sqsloop.BulkSender, SendAll's messages go in
// SendBulk calls of more than 10 and up to 1,000, whatever is ready once
// more than a batch of 10 is: 2,500 messages in a handful of calls where
// Send's batches would be 250; a message the queue refuses fails alone, and
// a bulk call that fails transiently is tried again. Fewer than a batch
// ready go through Send.
func TestSendAllInBulk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{MaxMessageSize: 1024})
		mb := &bulky{scripted: &scripted{Mailbox: q}}
		mb.bulkScript = func(n int, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			time.Sleep(9 * time.Millisecond)
			if n == 1 {
				return nil, errors.New("connection reset"), true // transient: all of them again
			}
			return nil, nil, false
		}
		p := mustNew(t, mb, producer.Config{})
		msgs := make([]sqsloop.OutgoingMessage, 2500)
		for i := range msgs {
			msgs[i] = sqsloop.OutgoingMessage{Body: fmt.Sprint("m", i)}
		}
		msgs[1234].Body = fmt.Sprintf("%02000d", 7) // over the queue's MaxMessageSize
		res, err := p.SendAll(context.Background(), msgs)
		var be *producer.BatchError
		if !errors.As(err, &be) || be.Failed != 1 || !errors.Is(be.Errs[1234], sqsloop.ErrInvalidArgument) {
			t.Fatalf("SendAll: %v, want message 1234 alone refused", err)
		}
		if _, err := p.Send(context.Background(), sqsloop.OutgoingMessage{Body: "alone"}); err != nil {
			t.Fatal(err)
		}
		closeOK(t, p)
		bulks, entries := mb.bulkCalls(), 0
		for _, n := range bulks {
			entries += n
			if n <= sqsloop.MaxBatchSize || n > sqsloop.MaxBulkSize {
				t.Errorf("a SendBulk call of %d messages, want 11 to 1,000", n)
			}
		}
		// Which go in bulk depends on how many are ready when the
		// dispatcher looks, which is the goroutines' order: a look that
		// found 10 or fewer ready sent them through Send.
		sends := mb.sendCalls()
		if len(sends) == 0 || sends[len(sends)-1] != 1 {
			t.Fatalf("Send calls of %v, want the last one of 1 (the message sent alone)", sends)
		}
		for _, n := range sends[:len(sends)-1] {
			if n > sqsloop.MaxBatchSize {
				t.Errorf("a Send call of %d of SendAll's messages, want at most 10 (more go in bulk)", n)
			}
			entries += n
		}
		if calls := len(bulks) + len(sends) - 1; len(bulks) == 0 || calls > 25 || entries != 2500+bulks[0] {
			t.Errorf("SendBulk calls of %v and Send calls of %v: want at most 25 for SendAll's messages, with 2,500 entries and those of the first bulk call (it failed and went again)", bulks, sends)
		}
		ids := map[string]bool{}
		for _, m := range drain(t, q) {
			ids[m.ID] = true
		}
		if len(ids) != 2500 {
			t.Errorf("the queue holds %d messages, want 2,500 (2,499 and the one sent alone)", len(ids))
		}
		for i, r := range res {
			if i != 1234 && !ids[r.MessageID] {
				t.Errorf("result %d: ID %q, not in the queue", i, r.MessageID)
			}
		}
	})
}
