package checkpoint_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/sqslambda"
)

// On Lambda the middleware works as under a consumer: a redelivered record
// loads the checkpoint an earlier invocation saved, a first delivery saves
// and fails (kept, and the record reported failed), and the record that
// succeeded has its checkpoint replaced by the mark of a job done.
func TestWorksTheSameOnLambda(t *testing.T) {
	store := &jobstate.Memory{}
	cp := newCheckpoints(t, store)
	if err := store.Put(t.Context(), jobstate.Record{Key: "checkpoint/jobs/m-again", State: jobstate.Saved, Value: []byte("step 5")}); err != nil {
		t.Fatal(err)
	}
	h, err := sqslambda.New(func(ctx context.Context, m *sqsloop.Message) error {
		b, ok, err := checkpoint.Load(ctx)
		if err != nil {
			return err
		}
		if m.ID == "m-again" {
			if !ok || string(b) != "step 5" {
				t.Errorf("the redelivered record loaded %q, %v; want the saved \"step 5\"", b, ok)
			}
			return nil
		}
		if ok {
			t.Errorf("a first delivery loaded %q", b)
		}
		if err := checkpoint.Save(ctx, []byte("step 1")); err != nil {
			return err
		}
		return errors.New("fails after step 1")
	}, sqslambda.Config{Middleware: []sqsloop.Middleware{cp.Middleware}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	record := func(id, receives string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, ReceiptHandle: "rh-" + id, Body: "job", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:jobs",
			Attributes: map[string]string{sqsloop.AttrApproximateReceiveCount: receives}}
	}
	resp, err := sqslambda.Invoke(t.Context(), h.Handle, events.SQSEvent{Records: []events.SQSMessage{record("m-again", "2"), record("m-new", "1")}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m-new" {
		t.Errorf("batch item failures %+v, want m-new only", resp.BatchItemFailures)
	}
	if r, err := store.Get(t.Context(), "checkpoint/jobs/m-again"); err != nil || r.State != jobstate.Completed {
		t.Errorf("the succeeded record's checkpoint: %+v, %v; want it marked done", r, err)
	}
	if r, err := store.Get(t.Context(), "checkpoint/jobs/m-new"); err != nil || string(r.Value) != "step 1" {
		t.Errorf("the failed record's checkpoint: %q, %v; want \"step 1\" kept", r.Value, err)
	}
}
