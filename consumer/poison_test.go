package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

type job struct {
	File string `json:"file"`
}

// receiveAll receives (with a 1 s long poll) and acks what mb holds.
func receiveAll(t *testing.T, mb sqsloop.Mailbox) []*sqsloop.Message {
	t.Helper()
	var all []*sqsloop.Message
	for {
		msgs, err := mb.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute, WaitTime: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return all
		}
		all = append(all, msgs...)
		for _, m := range msgs {
			if _, err := mb.Delete(t.Context(), []string{m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A JSON handler given a body that does not decode sends the message to
// the dead-letter queue on its first delivery: a copy with its body, its
// attributes and the reason, original ID and receive count 1, then the
// original deleted; the user's function never runs.
func TestUndecodableBodyGoesToTheDLQAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5})
		if err != nil {
			t.Fatal(err)
		}
		res, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{
			{Body: `{"file": "a.txt"}`},
			{Body: "{not json", MessageAttributes: map[string]sqsloop.MessageAttribute{"kind": {DataType: "String", StringValue: "file"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var got seen
		c := mustNew(t, q, JSONHandler(func(ctx context.Context, m *sqsloop.Message, j job) error {
			got.add(j.File)
			return nil
		}), fast())
		stop := start(t, c)
		time.Sleep(5 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if got.count("a.txt") != 1 || len(got.n) != 1 {
			t.Errorf("the handler saw %v, want a.txt once", got.n)
		}
		st := c.Stats()
		if st.Poisoned != 1 || st.Started != 2 || st.Acked != 2 || st.Nacked != 0 {
			t.Errorf("stats %+v, want 2 runs, 1 poisoned, both acked, no nack", st)
		}
		if qs := q.Stats(); qs.Visible+qs.InFlight != 0 || qs.Deleted != 2 || qs.Received != 2 {
			t.Errorf("source queue %+v, want both deleted after one receive each", qs)
		}
		dead := receiveAll(t, b.Queue("jobs-dlq"))
		if len(dead) != 1 {
			t.Fatalf("the DLQ holds %d messages, want 1", len(dead))
		}
		d := dead[0]
		a := d.MessageAttributes
		if d.Body != "{not json" || a["kind"].StringValue != "file" {
			t.Errorf("DLQ copy: body %q attributes %v, want the original's", d.Body, a)
		}
		if a[sqsloop.AttrPoisonReceiveCount].StringValue != "1" || a[sqsloop.AttrPoisonReceiveCount].DataType != "Number" ||
			a[sqsloop.AttrPoisonMessageID].StringValue != res[1].MessageID ||
			!strings.Contains(a[sqsloop.AttrPoisonReason].StringValue, "does not decode into consumer.job") {
			t.Errorf("DLQ copy's poison attributes %v, want receive count 1, message ID %s and the decode error", a, res[1].MessageID)
		}
	})
}

// Without a dead-letter queue a permanent failure is a failure like any
// other: nacked with the back-off, with a WARN naming the queue.
func TestPermanentWithoutDLQIsNacked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{Name: "plain"})
		send(t, q, "x")
		var logs syncBuffer
		cfg := fast()
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error {
			return sqsloop.Permanent(errors.New("unknown customer"))
		}, cfg)
		stop := start(t, c)
		time.Sleep(5 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		st := c.Stats()
		if st.Poisoned != 0 || st.Nacked < 2 || st.Acked != 0 {
			t.Errorf("stats %+v, want it nacked and retried, not poisoned", st)
		}
		if l := logs.String(); !strings.Contains(l, "could not go to the dead-letter queue") || !strings.Contains(l, `\"plain\"`) ||
			!strings.Contains(l, "no dead-letter queue") || !strings.Contains(l, "unknown customer") {
			t.Errorf("logs lack a WARN naming the queue and the reason:\n%s", l)
		}
	})
}

// deathAfterCopy is a mailbox whose process "dies" after a poison message's
// copy reached the dead-letter queue: every delete fails from then on, and
// the consumer is stopped without one; copyFails fails the copy instead.
type deathAfterCopy struct {
	*memmailbox.Queue
	copyFails bool
	mu        sync.Mutex
	dead      bool
}

func (d *deathAfterCopy) OpenDeadLetterQueue(ctx context.Context) (sqsloop.Mailbox, error) {
	dlq, err := d.Queue.OpenDeadLetterQueue(ctx)
	if err != nil {
		return nil, err
	}
	return &copyHook{Mailbox: dlq, d: d}, nil
}

func (d *deathAfterCopy) Delete(ctx context.Context, hs []string) ([]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, errors.New("the process is dead")
	}
	return d.Queue.Delete(ctx, hs)
}

func (d *deathAfterCopy) ChangeVisibility(ctx context.Context, cs []sqsloop.VisibilityChange) ([]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return nil, errors.New("the process is dead")
	}
	return d.Queue.ChangeVisibility(ctx, cs)
}

type copyHook struct {
	sqsloop.Mailbox
	d *deathAfterCopy
}

func (h *copyHook) Send(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	if h.d.copyFails {
		return nil, errors.New("the DLQ is unreachable")
	}
	res, err := h.Mailbox.Send(ctx, msgs)
	h.d.mu.Lock()
	h.d.dead = true
	h.d.mu.Unlock()
	return res, err
}

// The copy comes before the delete: a death between the two leaves the
// message in both queues (it comes back to the source when its lease
// ends); a copy that fails leaves it in the source only. Never in neither.
func TestPoisonCopyComesBeforeTheDelete(t *testing.T) {
	for _, copyFails := range []bool{false, true} {
		t.Run(fmt.Sprint("copy fails ", copyFails), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := new(memmailbox.Broker)
				defer b.Close()
				q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5})
				if err != nil {
					t.Fatal(err)
				}
				send(t, q, "poison")
				mb := &deathAfterCopy{Queue: q, copyFails: copyFails}
				cfg := fast()
				cfg.ShutdownTimeout = time.Second
				c := mustNew(t, mb, func(context.Context, *sqsloop.Message) error { return sqsloop.Permanent(errors.New("never")) }, cfg)
				stop := start(t, c)
				time.Sleep(time.Second)
				_ = stop()                                         // the flush of the dead process fails
				time.Sleep(cfg.VisibilityTimeout + 35*time.Second) // every lease and nack delay over
				src, dlq := receiveAll(t, q), receiveAll(t, b.Queue("jobs-dlq"))
				if len(src) != 1 || src[0].Body != "poison" {
					t.Errorf("source queue holds %d messages, want the poison message back", len(src))
				}
				if want := map[bool]int{false: 1, true: 0}[copyFails]; len(dlq) != want {
					t.Errorf("the DLQ holds %d copies, want %d", len(dlq), want)
				}
			})
		})
	}
}
