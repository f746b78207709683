package sqslambda

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/sqsloop/sqsloop"
)

// DefaultFunctionTimeout is Lambda's default function timeout, 3 s: the
// deadline Invoke gives an invocation when its timeout is 0.
const DefaultFunctionTimeout = 3 * time.Second

// ReadEvent decodes an SQS event as Lambda delivers it to a function, the
// JSON of events.SQSEvent ({"Records": [...]}): AWS's sample event, one
// that `sam local generate-event sqs receive-message` prints, or one saved
// from a function's log. Errors wrap sqsloop.ErrInvalidArgument: r is not
// such JSON (json's error wrapped too), or it holds no record.
func ReadEvent(r io.Reader) (events.SQSEvent, error) {
	var ev events.SQSEvent
	dec := json.NewDecoder(r)
	if err := dec.Decode(&ev); err != nil {
		return ev, fmt.Errorf("sqslambda: ReadEvent: not an SQS event: %w: %w", sqsloop.ErrInvalidArgument, err)
	}
	if len(ev.Records) == 0 {
		return ev, fmt.Errorf("sqslambda: ReadEvent: the event has no Records: %w", sqsloop.ErrInvalidArgument)
	}
	return ev, nil
}

// invocations numbers Invoke's request IDs.
var invocations atomic.Int64

// Invoke runs handle on event the way Lambda invokes a function whose
// timeout is timeout, to try a function locally or test it: handle gets a
// context with the invocation's deadline (timeout from now) and a
// lambdacontext.LambdaContext (request ID "local-N", the function ARN
// "arn:aws:lambda:REGION:ACCOUNT:function:local" in the region and account
// of the first record's eventSourceARN), and handle's response is checked
// as the event source mapping reads it. handle is Handler.Handle, or a
// function of its signature (a wrapper of it); nothing of Lambda's runtime
// is started, no SQS call is made but those of Config.OpenQueue's client.
//
// timeout is 1 ms–15 min; 0 means DefaultFunctionTimeout (3 s, Lambda's
// default). Invoke returns handle's response and error; a response the
// event source mapping would take as the whole batch failed (an
// itemIdentifier that is empty or not the messageId of a record of event,
// as AWS's guide lists) gives an error saying so, and one that comes after
// the deadline an error saying Lambda would have stopped the invocation
// (then every record would be retried). A timeout out of range gives an
// error wrapping sqsloop.ErrInvalidArgument, and handle does not run.
func Invoke(ctx context.Context, handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error),
	event events.SQSEvent, timeout time.Duration) (events.SQSEventResponse, error) {
	if timeout == 0 {
		timeout = DefaultFunctionTimeout
	}
	if timeout < time.Millisecond || timeout > maxFunctionTimeout {
		return events.SQSEventResponse{}, fmt.Errorf("sqslambda: Invoke: timeout: must be 0 (%v) or between 1ms and 15m (Lambda's longest), got %v: %w",
			DefaultFunctionTimeout, timeout, sqsloop.ErrInvalidArgument)
	}
	region, account := "us-east-1", "000000000000"
	if len(event.Records) > 0 {
		if parts := strings.Split(event.Records[0].EventSourceARN, ":"); len(parts) == 6 && parts[3] != "" && parts[4] != "" {
			region, account = parts[3], parts[4]
		}
	}
	lc := &lambdacontext.LambdaContext{
		AwsRequestID:       fmt.Sprint("local-", invocations.Add(1)),
		InvokedFunctionArn: "arn:aws:lambda:" + region + ":" + account + ":function:local",
	}
	ctx, cancel := context.WithTimeout(lambdacontext.NewContext(ctx, lc), timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	resp, err := handle(ctx, event)
	if err != nil {
		return resp, err
	}
	if late := time.Since(deadline); late > 0 {
		return resp, fmt.Errorf("sqslambda: Invoke: the function answered %v after its %v timeout: Lambda would have stopped it, and every record of the batch would come back", late, timeout)
	}
	ids := make(map[string]bool, len(event.Records))
	for _, r := range event.Records {
		ids[r.MessageId] = true
	}
	for i, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == "" || !ids[f.ItemIdentifier] {
			return resp, fmt.Errorf("sqslambda: Invoke: batchItemFailures[%d]: itemIdentifier %q is not the messageId of a record of the event: the event source mapping would fail the whole batch", i, f.ItemIdentifier)
		}
	}
	return resp, nil
}
