package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

type poisonJob struct {
	File string `json:"file"`
}

// A JSON handler given a body that does not decode sends the message to
// the queue's dead-letter queue on its first delivery, on both backends: the
// DLQ's copy has the body, the message's attributes, receive count 1, the
// original ID and the decode error; the source queue is left empty, and
// the well-formed message beside it is handled as usual.
func TestE2EPoisonGoesToTheDLQOnFirstDelivery(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: shortLease, MaxReceiveCount: 5})
		defer cleanup()
		attrs := map[string]sqsloop.MessageAttribute{"kind": {DataType: "String", StringValue: "file"}}
		ids := mailboxtest.SendAll(ctx, t, q.Mailbox,
			sqsloop.OutgoingMessage{Body: `{"file": "a.txt"}`},
			sqsloop.OutgoingMessage{Body: `{"file": `, MessageAttributes: attrs})
		runs := newRunLog()
		c, err := consumer.New(q.Mailbox, consumer.JSONHandler(func(ctx context.Context, m *sqsloop.Message, j poisonJob) error {
			runs.start(m)
			runs.finish(m)
			return nil
		}), e2eConfig())
		if err != nil {
			t.Fatal(err)
		}
		stop := runConsumer(t, c)
		if !waitUntil(ctx, h, patience, 100*time.Millisecond, func() bool { st := c.Stats(); return st.Poisoned == 1 && st.Acked == 2 }) {
			t.Errorf("%s: stats %+v, want 1 poisoned and both acked within %v", h.Name(), c.Stats(), patience)
		}
		if err := stop(); err != nil {
			t.Errorf("%s: Run: %v", h.Name(), err)
		}
		if st := c.Stats(); st.Received != 2 || st.Nacked != 0 {
			t.Errorf("%s: stats %+v, want each message received once, nothing nacked", h.Name(), st)
		}
		if runs.runsOf(ids[0]) != 1 || runs.runsOf(ids[1]) != 0 {
			t.Errorf("%s: the handler ran %d and %d times, want the good message once and the poison never", h.Name(), runs.runsOf(ids[0]), runs.runsOf(ids[1]))
		}
		d := mailboxtest.ReceiveN(ctx, t, q.DLQ, 1, patience, longLease)[0]
		a := d.MessageAttributes
		if d.Body != `{"file": ` || a["kind"].StringValue != "file" {
			t.Errorf("%s: DLQ copy %s, want the body and attributes sent", h.Name(), describe([]*sqsloop.Message{d}))
		}
		if a[sqsloop.AttrPoisonReceiveCount].StringValue != "1" || a[sqsloop.AttrPoisonMessageID].StringValue != ids[1] ||
			!strings.Contains(a[sqsloop.AttrPoisonReason].StringValue, "does not decode into integration.poisonJob") {
			t.Errorf("%s: DLQ copy's attributes %v, want receive count 1, message ID %s and the decode error", h.Name(), a, ids[1])
		}
		t.Logf("%s: the DLQ copy's reason: %s", h.Name(), a[sqsloop.AttrPoisonReason].StringValue)
		mailboxtest.AckAll(ctx, t, q.DLQ, d)
		mailboxtest.ExpectNone(ctx, t, q.Mailbox, shortLease+time.Second)
	})
}

// The copy comes before the delete, on the wire and through a process
// killed between the two: a consumer process copies a poison message to the
// dead-letter queue and is killed (SIGKILL) before it deletes it. The
// message is then in both queues, the DLQ's copy and the original back in
// the source when its lease ends: never in neither.
func TestE2EPoisonKilledBetweenCopyAndDelete(t *testing.T) {
	t.Parallel()
	h := sqsServerHarness(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: shortLease, MaxReceiveCount: 5})
	defer cleanup()
	ids := mailboxtest.SendBodies(ctx, t, q.Mailbox, "not JSON at all")
	cfg := childOn(t, q, shortLease, 0)
	cfg.Poison = true
	p := startChild(t, childEnv, cfg)
	p.Expect(t, "copied "+ids[0], patience)
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _, _, err := p.rest(t, patience)
	t.Logf("%s: the child, killed after the copy: %v", h.Name(), err)

	d := mailboxtest.ReceiveN(ctx, t, q.DLQ, 1, patience, longLease)[0]
	if d.Body != "not JSON at all" || d.MessageAttributes[sqsloop.AttrPoisonMessageID].StringValue != ids[0] {
		t.Errorf("%s: DLQ holds %s, want the copy of %s", h.Name(), describe([]*sqsloop.Message{d}), ids[0])
	}
	// Back after its lease, received at least once more: a long poll the
	// killed process left open may take it once more before the server
	// finds the connection gone (fauxqs does; a server cannot tell until it
	// answers), which hides it for one more lease.
	m := mailboxtest.ReceiveN(ctx, t, q.Mailbox, 1, patience, longLease)[0]
	if m.ID != ids[0] || m.ReceiveCount < 2 {
		t.Errorf("%s: source queue gave %s, want %s back after its lease, receive count 2 or more", h.Name(), describe([]*sqsloop.Message{m}), ids[0])
	}
	mailboxtest.AckAll(ctx, t, q.DLQ, d)
	mailboxtest.AckAll(ctx, t, q.Mailbox, m)
}

// poisonChildMain is childMain for childConfig.Poison: a consumer with a
// JSON handler of mb (every body a poison message), whose dead-letter queue
// says "copied ID" once a copy is sent and then hangs, so that the parent
// can kill the process between the copy and the delete.
func poisonChildMain(cfg childConfig, mb *sqsmailbox.Mailbox) int {
	c, err := consumer.New(&hangAfterCopy{mb}, consumer.JSONHandler(func(context.Context, *sqsloop.Message, poisonJob) error {
		return nil
	}), consumer.Config{
		VisibilityTimeout: cfg.Lease,
		WaitTime:          sqsloop.MaxWaitTime,
		Logger:            warnLogger(),
	})
	if err != nil {
		return childproc.Failed(err)
	}
	err = c.Run(context.Background())
	fmt.Fprintln(os.Stderr, "child: Run returned:", err)
	return 1
}

// hangAfterCopy is a Mailbox whose dead-letter queue hangs after a send.
type hangAfterCopy struct{ *sqsmailbox.Mailbox }

func (h *hangAfterCopy) OpenDeadLetterQueue(ctx context.Context) (sqsloop.Mailbox, error) {
	dlq, err := h.Mailbox.OpenDeadLetterQueue(ctx)
	if err != nil {
		return nil, err
	}
	return hangingDLQ{dlq}, nil
}

type hangingDLQ struct{ sqsloop.Mailbox }

func (d hangingDLQ) Send(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	res, err := d.Mailbox.Send(ctx, msgs)
	if err == nil && res[0].Err == nil {
		childproc.Say("copied %s", msgs[0].MessageAttributes[sqsloop.AttrPoisonMessageID].StringValue)
		select {} // the process dies here, its delete not sent
	}
	return res, err
}
