package integration

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// examples/lambda on the SQS-compatible server, with LEASES=on, on a queue
// with a redrive policy (maxReceiveCount 5) and receipt handles from real
// receives: a record whose body makes the function fail permanently
// ("poison") is in the dead-letter queue when the function answers, on its
// first delivery (receive count 1 in the copy, with its message ID, its
// message attribute and the reason), and is not in batchItemFailures,
// beside a failing record that is, and that comes back after its 1 s
// back-off (within 10 s on a queue whose visibility timeout is 30 s).
func TestLambdaExamplePoisonGoesToTheDLQ(t *testing.T) {
	t.Parallel()
	h := sqsServerHarness(t)
	srv := sqsServer(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: longLease, MaxReceiveCount: 5})
	defer cleanup()
	mb := q.Mailbox.(*sqsmailbox.Mailbox)
	api := newRuntimeAPI(t)
	log := startRuntime(t, buildLambdaExample(t), api, leasesEnv(srv, "BACKOFF=1s")...)

	files := writeFiles(t, 1, 4096)
	const poison, fail = "poison: names no file", "fail: always"
	mailboxtest.SendAll(ctx, t, mb,
		sqsloop.OutgoingMessage{Body: files[0]},
		sqsloop.OutgoingMessage{Body: poison, MessageAttributes: map[string]sqsloop.MessageAttribute{"kind": {DataType: "String", StringValue: "hash"}}},
		sqsloop.OutgoingMessage{Body: fail})
	payload, records := mappingReceive(t, srv, mb, 3, longLease)

	a, err := api.invoke(ctx, payload, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if a.kind != "response" {
		t.Fatalf("%s %s, want a response", a.kind, a.body)
	}
	if got, want := failures(t, a.body), []string{records[fail].MessageID}; !slices.Equal(got, want) {
		t.Errorf("batchItemFailures %v, want only the failing record %v (response %s)", got, want, a.body)
	}
	// The copy is there when the function has answered: no wait.
	msgs, err := q.DLQ.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: longLease})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("the DLQ gave %s when the function answered, want the poison record's copy", describe(msgs))
	}
	d, attrs := msgs[0], msgs[0].MessageAttributes
	if d.Body != poison || attrs["kind"].StringValue != "hash" || attrs[sqsloop.AttrPoisonReceiveCount].StringValue != "1" ||
		attrs[sqsloop.AttrPoisonMessageID].StringValue != records[poison].MessageID ||
		!strings.Contains(attrs[sqsloop.AttrPoisonReason].StringValue, "this job can never succeed") {
		t.Errorf("DLQ copy %s: want the poison record's body and attribute, receive count 1, message ID %s and the reason", describe(msgs), records[poison].MessageID)
	}
	t.Logf("%s: the DLQ copy of %s: receive count %s, reason %q", h.Name(), attrs[sqsloop.AttrPoisonMessageID].StringValue,
		attrs[sqsloop.AttrPoisonReceiveCount].StringValue, attrs[sqsloop.AttrPoisonReason].StringValue)
	if m := regexp.MustCompile(`msg=invocation .*nacked=(\d+) .*poisoned=(\d+)`).FindStringSubmatch(log.String()); m == nil || m[1] != "1" || m[2] != "1" {
		t.Errorf("the function's invocation line %q: want 1 nacked (the failing record) and 1 poisoned", m)
	}

	// The event source mapping deletes what the response does not list.
	for _, b := range []string{files[0], poison} {
		if errs, err := mb.Delete(ctx, []string{records[b].ReceiptHandle}); err != nil || errs[0] != nil {
			t.Fatalf("the event source mapping's delete of %q: %v %v", b, err, errs)
		}
	}
	back := mailboxtest.ReceiveN(ctx, t, mb, 1, patience, longLease)
	if back[0].Body != fail {
		t.Errorf("the source queue gave back %s, want the failing record", describe(back))
	}
	mailboxtest.AckAll(ctx, t, q.DLQ, d)
	mailboxtest.AckAll(ctx, t, mb, back...)
}
