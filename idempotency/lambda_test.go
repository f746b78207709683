package idempotency_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/sqslambda"
)

// On Lambda the middleware works as under a consumer: a record delivered
// again after its batch's response was lost (the function timed out after
// the handler returned) is reported done without running the handler.
func TestWorksTheSameOnLambda(t *testing.T) {
	i := newIdem(t, &jobstate.Memory{}, idempotency.Config{Queue: "jobs"})
	runs := map[string]int{}
	h, err := sqslambda.New(func(ctx context.Context, m *sqsloop.Message) error {
		runs[m.ID]++
		return nil
	}, sqslambda.Config{Middleware: []sqsloop.Middleware{i.Middleware}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	record := func(id, receives string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, ReceiptHandle: "rh-" + id + receives, Body: "job", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:jobs",
			Attributes: map[string]string{sqsloop.AttrApproximateReceiveCount: receives}}
	}
	for _, ev := range []events.SQSEvent{
		{Records: []events.SQSMessage{record("m-1", "1")}},
		{Records: []events.SQSMessage{record("m-1", "2"), record("m-2", "1")}},
	} {
		resp, err := sqslambda.Invoke(t.Context(), h.Handle, ev, 0)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("invocation: %+v, %v; want every record done", resp.BatchItemFailures, err)
		}
	}
	if runs["m-1"] != 1 || runs["m-2"] != 1 {
		t.Errorf("runs %v, want each message once", runs)
	}
	if st := i.Stats(); st.Duplicates != 1 {
		t.Errorf("stats %+v, want 1 duplicate", st)
	}
}
