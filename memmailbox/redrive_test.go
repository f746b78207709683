package memmailbox_test

import (
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

func TestRedriveAfterMaxReceiveCount(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	dlq := b.Queue("jobs-dlq")
	ids := send(t, q, bodies("poison", "fine")...)
	for i := 1; i <= 2; i++ {
		got := receive(t, q, 10, 0) // visible again at once: a failed attempt
		if len(got) != 2 || got[0].ReceiveCount != i {
			t.Fatalf("receive %d: %d messages, want both, count %d", i, len(got), i)
		}
	}
	// The third receive would deliver them a third time: they go to the DLQ.
	if got := receive(t, q, 10, time.Minute); len(got) != 0 {
		t.Fatalf("third receive returned %q, want nothing", bodiesOf(got))
	}
	st := wantStats(t, q, 0, 0, 0)
	if st.DeadLettered != 2 {
		t.Errorf("source DeadLettered = %d, want 2", st.DeadLettered)
	}
	dst := wantStats(t, dlq, 2, 0, 0)
	if dst.DeadLetteredIn != 2 || dst.Sent != 0 {
		t.Errorf("DLQ Stats = %+v", dst)
	}
	got := receive(t, dlq, 10, time.Minute)
	if len(got) != 2 || got[0].ID != ids[0] || got[0].Body != "poison" || got[0].ReceiveCount != 3 {
		t.Fatalf("DLQ gave %+v, want the same messages, receive count carried over", got)
	}
	deleteAll(t, dlq, got)
}

func TestRedriveOnlyWhatIsDue(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	dlq := b.Queue("jobs-dlq")
	send(t, q, bodies("old")...)
	receive(t, q, 1, 0) // "old" has had its one receive
	send(t, q, bodies("new")...)
	got := receive(t, q, 10, time.Minute)
	if len(got) != 1 || got[0].Body != "new" {
		t.Fatalf("received %q, want [new] (old redriven on the way)", bodiesOf(got))
	}
	wantStats(t, dlq, 1, 0, 0)
}

func TestRedriveFIFOKeepsGroups(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs.fifo", FIFO: true, ContentBasedDeduplication: true, MaxReceiveCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	dlq := b.Queue("jobs-dlq.fifo")
	send(t, q,
		sqsloop.OutgoingMessage{Body: "a1", MessageGroupID: "a"},
		sqsloop.OutgoingMessage{Body: "a2", MessageGroupID: "a"},
	)
	if got := bodiesOf(receive(t, q, 10, 0)); len(got) != 2 {
		t.Fatalf("first receive %q, want both", got)
	}
	if got := receive(t, q, 10, time.Minute); len(got) != 0 {
		t.Fatalf("second receive %q, want nothing", bodiesOf(got))
	}
	got := receive(t, dlq, 10, time.Minute)
	if b := bodiesOf(got); len(b) != 2 || b[0] != "a1" || b[1] != "a2" || got[0].MessageGroupID != "a" {
		t.Fatalf("DLQ gave %q, want [a1 a2] of group a", b)
	}
}
