package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/visibility"
)

// lateMailbox delivers Receive's answers late, as a slow network does: the
// mailbox takes the messages (their visibility timeout starts), then the
// answer spends delay on the way back. The messages are returned even when
// ctx ends meanwhile (an answer on the wire is not dropped). On the
// virtual-time backends (memmailbox, sqlmailbox/sqlite) it models what a
// long poll on the wire does to the lease: the timeout started before the
// consumer sees the message.
type lateMailbox struct {
	sqsloop.Mailbox
	delay time.Duration
}

func (m *lateMailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	msgs, err := m.Mailbox.Receive(ctx, req)
	if len(msgs) > 0 {
		timer := time.NewTimer(m.delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
	}
	return msgs, err
}

// Timings of the long-poll scenarios: what users run (20 s long polls) with
// short leases, and messages sent well into an idle poll.
const (
	// midPoll is how long the consumer has been polling an empty queue when
	// the messages are sent.
	midPoll = 12 * time.Second
	// lateAnswer is how late lateMailbox delivers a receive's answer.
	lateAnswer = 300 * time.Millisecond
)

// longPollConfig: 20 s long polls, leases of vis looked at every second and
// extended by vis, a 5 s drain (on the bug's path duplicates are still
// running when the test stops the consumer).
func longPollConfig(vis time.Duration) consumer.Config {
	cfg := e2eConfig()
	cfg.Concurrency = 4
	cfg.WaitTime = sqsloop.MaxWaitTime
	cfg.VisibilityTimeout = vis
	cfg.Visibility = visibility.Config{Interval: time.Second, Extension: vis}
	cfg.ShutdownTimeout = 5 * time.Second
	return cfg
}

// startLongPollConsumer starts a consumer of q with longPollConfig(vis)
// whose handler records its runs in runs and beats every 250 ms for 3× vis;
// stop drains it and returns Run's error. In virtual time (memmailbox,
// sqlmailbox/sqlite) the consumer reads q's mailbox behind lateMailbox (the
// answer's trip back); on the wall clock (the SQS server, PostgreSQL) as is
// (the answer really travels).
func startLongPollConsumer(t *testing.T, h mailboxtest.Harness, q mailboxtest.Queue, vis time.Duration) (c *consumer.Consumer, runs *runLog, stop func() error) {
	t.Helper()
	mb := q.Mailbox
	if h.Features().VirtualTime {
		mb = &lateMailbox{Mailbox: q.Mailbox, delay: lateAnswer}
	}
	runs = newRunLog()
	c, err := consumer.New(mb, runs.handler(func(ctx context.Context) error {
		return beat(ctx, h, 3*vis, 250*time.Millisecond)
	}), longPollConfig(vis))
	if err != nil {
		t.Fatal(err)
	}
	return c, runs, runConsumer(t, c)
}

// checkRanOnce fails t for each message of ids that did not run exactly
// once, and for any message left in the queue after the consumer stopped.
func checkRanOnce(t *testing.T, h mailboxtest.Harness, runs *runLog, ids []string, left []*sqsloop.Message) {
	t.Helper()
	for i, id := range ids {
		if n := runs.runsOf(id); n != 1 {
			t.Errorf("%s: message %d (%s) ran %d times, want once", h.Name(), i, id, n)
		}
	}
	if len(left) != 0 {
		t.Errorf("%s: %d messages left in the queue after the consumer stopped: %s", h.Name(), len(left), describe(left))
	}
}

// A message that arrives in the middle of a long poll keeps its lease: SQS
// starts its visibility timeout when it hands the message out (up to
// WaitTime after the request was sent), so the consumer must count the lease
// from there, not from when the request went out. Messages sent 12 s into an
// idle consumer's 20 s poll, with 4 s leases and handlers that beat every
// 250 ms for 12 s (3× the lease), each run exactly once, lose no lease, are
// acked once, and leave the queue empty.
//
// Guards the bug where a job sent 4 s into a 5 s poll ran 5 times with
// 5 leases lost: sqsmailbox stamped ReceivedAt before the request was sent,
// so the extender took a deadline already past for the lease's.
func TestE2EMidPollMessageKeepsItsLease(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		const vis = 4 * time.Second
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: vis})
		defer cleanup()

		c, runs, stop := startLongPollConsumer(t, h, q, vis)
		if err := h.Sleep(ctx, midPoll); err != nil {
			t.Fatal(err)
		}
		ids := mailboxtest.SendBodies(ctx, t, q.Mailbox, "job-0", "job-1", "job-2")
		if !waitUntil(ctx, h, 3*vis+10*time.Second, 100*time.Millisecond, func() bool { return runs.finishedAll(ids) }) {
			t.Errorf("%s: not every message finished within %v of its send", h.Name(), 3*vis+10*time.Second)
		} else if err := h.Sleep(ctx, vis+2*time.Second); err != nil { // a lost lease shows up within a lease
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Errorf("%s: Run: %v", h.Name(), err)
		}
		left := leftovers(ctx, t, q.Mailbox, vis+time.Second)

		st := c.Stats()
		fig := runs.figures(ids)
		t.Logf("%s: %d messages sent %v into a %v poll, leases of %v: %s", h.Name(), len(ids), midPoll, sqsloop.MaxWaitTime, vis, fig)
		t.Logf("%s: stats %+v; %d left in the queue", h.Name(), st, len(left))
		checkRanOnce(t, h, runs, ids, left)
		if st.LeasesLost != 0 || st.Acked != int64(len(ids)) || st.Redelivered != 0 {
			t.Errorf("%s: stats %+v: want no lease lost, %d acked, none redelivered", h.Name(), st, len(ids))
		}
	})
}

// On a FIFO queue, a message group sent in the middle of an idle long poll
// runs once per message, in order, with no lease lost. Each message of the
// group arrives mid-poll: the first 10 s into the consumer's idle poll, and
// (on servers that hand out one message of a group per receive) each next
// one when its predecessor is acked, in the middle of the poll that was
// waiting for it.
//
// Guards the bug where, in a group of 6, the second message ran 23 times and
// the others never ran: each redelivery arrived mid-poll, and its lease was
// counted from the request and so already lapsed.
func TestE2EMidPollFIFOGroupRunsOnceInOrder(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		if !h.Features().FIFO {
			t.Skipf("%s: no FIFO queues", h.Name())
		}
		const vis = 3 * time.Second
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{FIFO: true, VisibilityTimeout: vis})
		defer cleanup()

		c, runs, stop := startLongPollConsumer(t, h, q, vis)
		if err := h.Sleep(ctx, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		var out []sqsloop.OutgoingMessage
		var want []string
		for i := range 3 {
			body := fmt.Sprint(i)
			want = append(want, body)
			out = append(out, sqsloop.OutgoingMessage{Body: body, MessageGroupID: "g", DeduplicationID: body})
		}
		ids := mailboxtest.SendAll(ctx, t, q.Mailbox, out...)
		patienceFIFO := time.Duration(len(ids))*3*vis + 6*time.Second
		if !waitUntil(ctx, h, patienceFIFO, 100*time.Millisecond, func() bool { return runs.finishedAll(ids) }) {
			t.Errorf("%s: not every message of the group finished within %v of its send", h.Name(), patienceFIFO)
		} else if err := h.Sleep(ctx, vis+time.Second); err != nil { // a lost lease shows up within a lease
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Errorf("%s: Run: %v", h.Name(), err)
		}
		left := leftovers(ctx, t, q.Mailbox, vis+time.Second)

		st := c.Stats()
		fig := runs.figures(ids)
		order := runs.firstOrder()
		t.Logf("%s: group of %d sent 10 s into a %v poll, leases of %v: %s; first runs in order %v",
			h.Name(), len(ids), sqsloop.MaxWaitTime, vis, fig, order)
		t.Logf("%s: stats %+v; %d left in the queue", h.Name(), st, len(left))
		checkRanOnce(t, h, runs, ids, left)
		if !slices.Equal(order, want) {
			t.Errorf("%s: first runs in order %v, want %v", h.Name(), order, want)
		}
		if st.LeasesLost != 0 || st.Acked != int64(len(ids)) {
			t.Errorf("%s: stats %+v: want no lease lost and %d acked", h.Name(), st, len(ids))
		}
	})
}
