package memmailbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newQueue returns a new queue set up by spec on a new broker, closed at
// the end of the test.
func newQueue(t testing.TB, spec sqsloop.QueueSpec) (*memmailbox.Broker, *memmailbox.Queue) {
	t.Helper()
	b := new(memmailbox.Broker)
	t.Cleanup(func() { _ = b.Close() })
	q, err := b.CreateQueue(spec)
	if err != nil {
		t.Fatalf("CreateQueue(%q): %v", spec.Name, err)
	}
	return b, q
}

// send sends one message per body and returns their IDs.
func send(t testing.TB, q *memmailbox.Queue, msgs ...sqsloop.OutgoingMessage) []string {
	t.Helper()
	ids := make([]string, 0, len(msgs))
	for len(msgs) > 0 {
		n := min(len(msgs), sqsloop.MaxBatchSize)
		res, err := q.Send(context.Background(), msgs[:n])
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("Send entry %d: %v", i, r.Err)
			}
			ids = append(ids, r.MessageID)
		}
		msgs = msgs[n:]
	}
	return ids
}

// bodies turns bodies into outgoing messages.
func bodies(bs ...string) []sqsloop.OutgoingMessage {
	out := make([]sqsloop.OutgoingMessage, len(bs))
	for i, b := range bs {
		out[i].Body = b
	}
	return out
}

// receive does one Receive without waiting.
func receive(t testing.TB, q *memmailbox.Queue, max int, vt time.Duration) []*sqsloop.Message {
	t.Helper()
	msgs, err := q.Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: max, VisibilityTimeout: vt})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return msgs
}

// bodiesOf returns the bodies of msgs, in order.
func bodiesOf(msgs []*sqsloop.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Body
	}
	return out
}

// wantErr fails t unless err matches target and mentions every word.
func wantErr(t testing.TB, err, target error, words ...string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one matching %v", err, target)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

// wantStats fails t unless q's gauges are as given.
func wantStats(t testing.TB, q *memmailbox.Queue, visible, inFlight, delayed int) memmailbox.Stats {
	t.Helper()
	st := q.Stats()
	if st.Visible != visible || st.InFlight != inFlight || st.Delayed != delayed {
		t.Fatalf("Stats visible/in flight/delayed = %d/%d/%d, want %d/%d/%d (%+v)",
			st.Visible, st.InFlight, st.Delayed, visible, inFlight, delayed, st)
	}
	return st
}

// deleteAll acks msgs and fails t on any error.
func deleteAll(t testing.TB, q *memmailbox.Queue, msgs []*sqsloop.Message) {
	t.Helper()
	for len(msgs) > 0 {
		n := min(len(msgs), sqsloop.MaxBatchSize)
		hs := make([]string, n)
		for i, m := range msgs[:n] {
			hs[i] = m.ReceiptHandle
		}
		errs, err := q.Delete(context.Background(), hs)
		if err != nil {
			t.Fatalf("Delete: %v", err)
		}
		for i, e := range errs {
			if e != nil {
				t.Fatalf("Delete entry %d: %v", i, e)
			}
		}
		msgs = msgs[n:]
	}
}

// change sets m's visibility timeout through q, as the lease owner does,
// and returns the call's error or the entry's.
func change(q *memmailbox.Queue, m *sqsloop.Message, d time.Duration) error {
	errs, err := q.ChangeVisibility(context.Background(), []sqsloop.VisibilityChange{{ReceiptHandle: m.ReceiptHandle, Timeout: d}})
	if err != nil {
		return err
	}
	return errs[0]
}

// ack deletes m through q and returns the call's error or the entry's.
func ack(q *memmailbox.Queue, m *sqsloop.Message) error {
	errs, err := q.Delete(context.Background(), []string{m.ReceiptHandle})
	if err != nil {
		return err
	}
	return errs[0]
}
