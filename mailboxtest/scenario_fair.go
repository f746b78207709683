package mailboxtest

import (
	"testing"

	"github.com/sqsloop/sqsloop"
)

// testStandardQueueKeepsGroupID: a message sent with a MessageGroupID to a
// standard queue (a fair queue's tenant: SQS orders its delivery by it,
// and a consumer's per-group limit reads it) comes back with it; one sent
// without comes back without.
func testStandardQueueKeepsGroupID(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	ids := SendAll(ctx, t, q.Mailbox, sqsloop.OutgoingMessage{Body: "tenant", MessageGroupID: "tenant-a"}, sqsloop.OutgoingMessage{Body: "none"})
	want := map[string]string{ids[0]: "tenant-a", ids[1]: ""}
	msgs := ReceiveN(ctx, t, q.Mailbox, 2, settle, longLease)
	for _, m := range msgs {
		switch {
		case m.MessageGroupID == want[m.ID]:
		case !h.Features().StandardGroupID && m.MessageGroupID == "":
			declared(t, h, DiffStandardQueueDropsGroupID, "a standard queue's message sent with MessageGroupID %q came back without it", want[m.ID])
		default:
			t.Errorf("%s: MessageGroupID %q, want %q", m.Body, m.MessageGroupID, want[m.ID])
		}
	}
	AckAll(ctx, t, q.Mailbox, msgs...)
}
