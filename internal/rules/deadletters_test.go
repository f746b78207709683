package rules

import (
	"context"
	"errors"
	"fmt"
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
	b := new(memmailbox.Broker)
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
	if n := b.Queue("jobs-dlq").Stats().Visible; n != 2 {
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
	if !errors.Is(err, sqsloop.ErrNoDeadLetterQueue) || !strings.Contains(err.Error(), "rules.plainMailbox") {
		t.Errorf("Copy with a Mailbox that cannot name its DLQ: %v, want ErrNoDeadLetterQueue naming its type", err)
	}
}

// A FIFO message's copy keeps its message group and deduplication ID; a
// message with no room for the poison attributes keeps its own only.
func TestPoisonCopy(t *testing.T) {
	m := &sqsloop.Message{ID: "id-1", Body: "b", ReceiveCount: 3, MessageGroupID: "g",
		Attributes: map[string]string{sqsloop.AttrSequenceNumber: "18", sqsloop.AttrMessageDeduplicationID: "d-1"}}
	out := poisonCopy(m, errors.New("bad\x00input"))
	if out.MessageGroupID != "g" || out.DeduplicationID != "d-1" || out.Body != "b" {
		t.Errorf("copy %+v, want group g, dedup d-1", out)
	}
	if r := out.MessageAttributes[sqsloop.AttrPoisonReason].StringValue; r != "bad?input" {
		t.Errorf("reason %q, want the characters SQS takes", r)
	}
	if errs, err := sqsloop.ValidateSend([]sqsloop.OutgoingMessage{out}); err != nil || errs[0] != nil {
		t.Errorf("the copy breaks SQS's rules: %v %v", err, errs[0])
	}
	full := map[string]sqsloop.MessageAttribute{}
	for i := range 8 {
		full[fmt.Sprint("a", i)] = sqsloop.MessageAttribute{DataType: "String", StringValue: "v"}
	}
	out = poisonCopy(&sqsloop.Message{ID: "id-2", Body: "b", MessageAttributes: full}, errors.New("x"))
	if len(out.MessageAttributes) != 8 || out.MessageGroupID != "" || out.DeduplicationID != "" {
		t.Errorf("copy of a message with 8 attributes: %+v, want its own 8 only", out)
	}
	own := map[string]sqsloop.MessageAttribute{"a": {DataType: "String", StringValue: "v"}}
	big := &sqsloop.Message{ID: "id-3", Body: strings.Repeat("b", sqsloop.MaxMessageSize-10), MessageAttributes: own}
	if out = poisonCopy(big, errors.New("x")); len(out.MessageAttributes) != 1 || out.MessageAttributes["a"].StringValue != "v" {
		t.Errorf("copy of a message with no room left in 1 MiB has attributes %v, want its own only", out.MessageAttributes)
	}
	out.MessageAttributes["a"] = sqsloop.MessageAttribute{DataType: "String", StringValue: "changed"}
	if own["a"].StringValue != "v" {
		t.Error("the copy shares the message's attributes")
	}
	if out = poisonCopy(&sqsloop.Message{ID: "id-4", Body: "b", MessageAttributes: own}, errors.New("x")); len(out.MessageAttributes) != 4 || len(own) != 1 {
		t.Errorf("copy with attributes %v (message's now %v), want its own and the 3 poison ones, the message's untouched", out.MessageAttributes, own)
	}
	if r := reason(errors.New(strings.Repeat("é", 600))); len(r) > sqsloop.MaxPoisonReason {
		t.Errorf("reason of %d bytes, want at most %d", len(r), sqsloop.MaxPoisonReason)
	}
}

// The copy of a message that is no FIFO group's by the one FIFO rule (a
// SequenceNumber without a message group: what a mailbox that fills
// Attributes but not MessageGroupID hands out) carries no deduplication
// ID: a standard dead-letter queue takes it. The consumer's own copy of
// the rule (a SequenceNumber alone) sent one, which every queue refuses
// without a group.
func TestPoisonCopyFollowsTheFIFORule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5})
		if err != nil {
			t.Fatal(err)
		}
		m := &sqsloop.Message{ID: "id-1", Body: "b", ReceiveCount: 1,
			Attributes: map[string]string{sqsloop.AttrSequenceNumber: "18", sqsloop.AttrMessageDeduplicationID: "d-1"}}
		if out := poisonCopy(m, errors.New("bad")); out.DeduplicationID != "" || out.MessageGroupID != "" {
			t.Errorf("copy %+v: want no group and no deduplication ID (not a FIFO group's message)", out)
		}
		if err := NewDeadLetters(q).Copy(t.Context(), m, errors.New("bad")); err != nil {
			t.Fatalf("Copy to the standard dead-letter queue: %v", err)
		}
		if n := b.Queue("jobs-dlq").Stats().Visible; n != 1 {
			t.Errorf("the DLQ holds %d copies, want 1", n)
		}
	})
}
