package integration

import (
	"slices"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// The deadline on the wire: examples/lambda as a custom runtime with
// LEASES=on, on the SQS-compatible server and a queue whose visibility
// timeout is 30 s, gets three records that would each take 10 s (SLOW=1s,
// CHUNKS=10), one at a time, in an invocation whose deadline is 4 s away.
// The Runtime API receives the answer before that deadline (the cut-off is
// DeadlineMargin, 1.5 s, before it; the answer normally arrives about
// 1.4 s early, and only its order against the deadline is asserted), the
// answer lists all three records (the first cut short, the others never
// started), and the three are visible again at once: another receiver gets
// them within 10 s of the answer, long before the 30 s visibility timeout
// of the event source mapping's receive ends.
func TestLambdaRuntimeAPIAnswersBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	h := sqsServerHarness(t)
	srv := sqsServer(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: longLease, MaxReceiveCount: 5})
	defer cleanup()
	mb := q.Mailbox.(*sqsmailbox.Mailbox)
	api := newRuntimeAPI(t)
	startRuntime(t, buildLambdaExample(t), api, leasesEnv(srv, "SLOW=1s", "CHUNKS=10", "CONCURRENCY=1")...)

	files := writeFiles(t, 3, 64*1024)
	msgs := make([]sqsloop.OutgoingMessage, len(files))
	for i, f := range files {
		msgs[i] = sqsloop.OutgoingMessage{Body: f}
	}
	mailboxtest.SendAll(ctx, t, mb, msgs...)
	payload, records := mappingReceive(t, srv, mb, len(files), longLease)
	received := time.Now()

	a, err := api.invoke(ctx, payload, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: answered %v before the deadline", h.Name(), a.deadline.Sub(a.at).Round(time.Millisecond))
	if !a.at.Before(a.deadline) {
		t.Errorf("the answer reached the Runtime API %v after the deadline: Lambda would have retried the whole batch", a.at.Sub(a.deadline))
	}
	if a.kind != "response" {
		t.Fatalf("%s %s, want a response", a.kind, a.body)
	}
	var want []string
	for _, f := range files {
		want = append(want, records[f].MessageID)
	}
	if got := failures(t, a.body); !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("batchItemFailures %v, want all three records %v", got, want)
	}

	back := mailboxtest.ReceiveN(ctx, t, mb, len(files), patience, longLease) // fails t unless all three come within 10 s
	t.Logf("the three records were received again %v after the answer, %v after the mapping's receive",
		time.Since(a.at).Round(time.Millisecond), time.Since(received).Round(time.Millisecond))
	mailboxtest.AckAll(ctx, t, mb, back...)
}
