package sqslambda

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/sqsloop/sqsloop"
)

// An event file runs as Lambda would run it: ReadEvent reads it, Invoke
// gives the handler the function's deadline (3 s by default) and a
// lambdacontext naming the invocation, and returns the response.
func TestInvokeRunsAnEventFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := os.Open(filepath.Join("testdata", "standard.json"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ev, err := ReadEvent(f)
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			lc, ok := lambdacontext.FromContext(ctx)
			deadline, _ := ctx.Deadline()
			if !ok || !strings.HasPrefix(lc.AwsRequestID, "local-") || lc.InvokedFunctionArn != "arn:aws:lambda:us-east-2:123456789012:function:local" {
				t.Errorf("lambdacontext %+v (%v), want a local request ID and the function ARN in the queue's region and account", lc, ok)
			}
			seen = append(seen, time.Until(deadline).String())
			return byBody(nil)(ctx, m)
		}, Config{Concurrency: 1})
		resp, err := Invoke(context.Background(), h.Handle, ev, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(resp), idsOf(ev, 2, 4, 6); !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want %v", got, want)
		}
		if len(seen) != 7 || seen[0] != "1.5s" { // the 3 s default less the 1.5 s margin
			t.Errorf("handler deadlines %v, want 7 records, the first with 1.5s left", seen)
		}
	})
}

// Invoke reports what Lambda would take as a failure of the whole batch:
// an itemIdentifier not of the event, an empty one, an answer after the
// deadline; and refuses a timeout out of range.
func TestInvokeChecksTheResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", EventSourceARN: testARN}}}
		answer := func(id string) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
				return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: id}}}, nil
			}
		}
		ctx := context.Background()
		if _, err := Invoke(ctx, answer("m-1"), ev, time.Second); err != nil {
			t.Errorf("a failure of the event's record: %v", err)
		}
		for _, id := range []string{"m-2", ""} {
			if _, err := Invoke(ctx, answer(id), ev, time.Second); err == nil || !strings.Contains(err.Error(), "fail the whole batch") {
				t.Errorf("itemIdentifier %q: %v, want the whole batch failed", id, err)
			}
		}
		late := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			time.Sleep(2 * time.Second)
			return events.SQSEventResponse{}, nil
		}
		if _, err := Invoke(ctx, late, ev, time.Second); err == nil || !strings.Contains(err.Error(), "would have stopped it") {
			t.Errorf("an answer after the deadline: %v", err)
		}
		if _, err := Invoke(ctx, answer("m-1"), ev, 16*time.Minute); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("a 16-minute timeout: %v, want ErrInvalidArgument", err)
		}
	})
}

func TestReadEventRefusesWhatIsNotAnEvent(t *testing.T) {
	for _, in := range []string{"", "not json", `{"Records": []}`, `{"detail-type": "x"}`} {
		if _, err := ReadEvent(strings.NewReader(in)); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("ReadEvent(%q) = %v, want ErrInvalidArgument", in, err)
		}
	}
}
