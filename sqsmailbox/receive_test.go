package sqsmailbox

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/sqsloop/sqsloop"
)

func TestReceiveRequestShape(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	_, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: 1500 * time.Millisecond, WaitTime: 0})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if len(f.receives) != 1 {
		t.Fatalf("ReceiveMessage calls = %d, want 1", len(f.receives))
	}
	in := f.receives[0]
	if got := aws.ToString(in.QueueUrl); got != testQueueURL {
		t.Errorf("QueueUrl = %q, want %q", got, testQueueURL)
	}
	if in.MaxNumberOfMessages != 10 || in.VisibilityTimeout != 2 || in.WaitTimeSeconds != 0 {
		t.Errorf("MaxNumberOfMessages, VisibilityTimeout, WaitTimeSeconds = %d, %d, %d; want 10, 2, 0",
			in.MaxNumberOfMessages, in.VisibilityTimeout, in.WaitTimeSeconds)
	}
	if len(in.MessageSystemAttributeNames) != 1 || in.MessageSystemAttributeNames[0] != types.MessageSystemAttributeNameAll {
		t.Errorf("MessageSystemAttributeNames = %v, want [All]", in.MessageSystemAttributeNames)
	}
	if len(in.MessageAttributeNames) != 1 || in.MessageAttributeNames[0] != "All" {
		t.Errorf("MessageAttributeNames = %v, want [All]", in.MessageAttributeNames)
	}
	// The per-call option that puts zero values on the wire is passed; the
	// wire tests check what it does with a real client.
	opts := sqs.Options{}
	for _, fn := range f.receiveOpt[0] {
		fn(&opts)
	}
	if len(opts.APIOptions) != 1 {
		t.Errorf("ReceiveMessage got %d API options, want 1 (sendZeros)", len(opts.APIOptions))
	}
}

func TestReceiveRoundsDurationsUp(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want int32
	}{
		{0, 0},
		{time.Nanosecond, 1},
		{time.Second, 1},
		{time.Second + time.Millisecond, 2},
		{19*time.Second + 1, 20},
		{20 * time.Second, 20},
	}
	for _, c := range cases {
		f := &fakeAPI{}
		m := newTestMailbox(t, f)
		if _, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: c.d, WaitTime: c.d}); err != nil {
			t.Fatalf("Receive(%v): %v", c.d, err)
		}
		in := f.receives[0]
		if in.VisibilityTimeout != c.want || in.WaitTimeSeconds != c.want {
			t.Errorf("%v: VisibilityTimeout, WaitTimeSeconds = %d, %d; want %d", c.d, in.VisibilityTimeout, in.WaitTimeSeconds, c.want)
		}
	}
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	if _, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: sqsloop.MaxVisibilityTimeout}); err != nil {
		t.Fatalf("Receive(12h): %v", err)
	}
	if got := f.receives[0].VisibilityTimeout; got != 43200 {
		t.Errorf("VisibilityTimeout for 12 h = %d, want 43200", got)
	}
}

func TestReceiveValidation(t *testing.T) {
	cases := []struct {
		name  string
		req   sqsloop.ReceiveRequest
		field string
	}{
		{"no messages", sqsloop.ReceiveRequest{MaxMessages: 0}, "MaxMessages"},
		{"too many messages", sqsloop.ReceiveRequest{MaxMessages: 11}, "MaxMessages"},
		{"negative visibility", sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: -time.Second}, "VisibilityTimeout"},
		{"visibility past 12h", sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: 12*time.Hour + time.Nanosecond}, "VisibilityTimeout"},
		{"negative wait", sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: -1}, "WaitTime"},
		{"wait past 20s", sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 20*time.Second + time.Nanosecond}, "WaitTime"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeAPI{}
			m := newTestMailbox(t, f)
			msgs, err := m.Receive(t.Context(), c.req)
			if !errors.Is(err, sqsloop.ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Errorf("err = %q, want it to name %s", err, c.field)
			}
			if msgs != nil || f.calls() != 0 {
				t.Errorf("got %d messages and %d calls, want none", len(msgs), f.calls())
			}
		})
	}
}

func TestReceiveMapsMessages(t *testing.T) {
	f := &fakeAPI{onReceive: func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
		return &sqs.ReceiveMessageOutput{Messages: []types.Message{{
			MessageId:     aws.String("m-1"),
			Body:          aws.String("hello"),
			ReceiptHandle: aws.String("rh-1"),
			Attributes: map[string]string{
				"ApproximateReceiveCount":          "3",
				"SentTimestamp":                    "1700000000123",
				"ApproximateFirstReceiveTimestamp": "1700000001456",
				"MessageGroupId":                   "g-1",
				"SenderId":                         "AIDA",
			},
			MessageAttributes: map[string]types.MessageAttributeValue{
				"s":   {DataType: aws.String("String"), StringValue: aws.String("x")},
				"n":   {DataType: aws.String("Number.int"), StringValue: aws.String("42")},
				"b":   {DataType: aws.String("Binary"), BinaryValue: []byte{1, 2}},
				"bgz": {DataType: aws.String("Binary.gzip"), BinaryValue: []byte{3}},
			},
		}}}, nil
	}}
	m := newTestMailbox(t, f)
	msgs, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	msg := msgs[0]
	if msg.ID != "m-1" || msg.Body != "hello" || msg.ReceiptHandle != "rh-1" || msg.MessageGroupID != "g-1" {
		t.Errorf("ID, Body, ReceiptHandle, MessageGroupID = %q, %q, %q, %q", msg.ID, msg.Body, msg.ReceiptHandle, msg.MessageGroupID)
	}
	if msg.ReceiveCount != 3 {
		t.Errorf("ReceiveCount = %d, want 3", msg.ReceiveCount)
	}
	if !msg.SentAt.Equal(time.UnixMilli(1700000000123)) || !msg.FirstReceivedAt.Equal(time.UnixMilli(1700000001456)) {
		t.Errorf("SentAt, FirstReceivedAt = %v, %v", msg.SentAt, msg.FirstReceivedAt)
	}
	if msg.VisibilityTimeout != 30*time.Second {
		t.Errorf("VisibilityTimeout = %v, want 30s", msg.VisibilityTimeout)
	}
	if msg.Attributes["SenderId"] != "AIDA" {
		t.Errorf("raw Attributes lost SenderId: %v", msg.Attributes)
	}
	wantAttrs := map[string]sqsloop.MessageAttribute{
		"s":   {DataType: "String", StringValue: "x"},
		"n":   {DataType: "Number.int", StringValue: "42"},
		"b":   {DataType: "Binary", BinaryValue: []byte{1, 2}},
		"bgz": {DataType: "Binary.gzip", BinaryValue: []byte{3}},
	}
	for name, want := range wantAttrs {
		got, ok := msg.MessageAttributes[name]
		if !ok || got.DataType != want.DataType || got.StringValue != want.StringValue || !bytes.Equal(got.BinaryValue, want.BinaryValue) {
			t.Errorf("MessageAttributes[%q] = %+v, want %+v", name, got, want)
		}
	}
	// Bound to the mailbox: Ack deletes through it, with this receipt handle.
	if err := msg.Ack(t.Context()); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	if len(f.deletes) != 1 || aws.ToString(f.deletes[0].Entries[0].ReceiptHandle) != "rh-1" {
		t.Errorf("Ack did not delete rh-1 through the mailbox: %+v", f.deletes)
	}
}

func TestReceiveMalformedAttributesKeepMessage(t *testing.T) {
	f := &fakeAPI{onReceive: func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
		return &sqs.ReceiveMessageOutput{Messages: []types.Message{{
			MessageId:     aws.String("m-1"),
			ReceiptHandle: aws.String("rh-1"),
			Attributes:    map[string]string{"ApproximateReceiveCount": "many", "SentTimestamp": "yesterday"},
		}, {
			MessageId:     aws.String("m-2"),
			ReceiptHandle: aws.String("rh-2"),
		}}}, nil
	}}
	m := newTestMailbox(t, f)
	msgs, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 2})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	if msgs[0].ReceiveCount != 0 || !msgs[0].SentAt.IsZero() || msgs[0].Attributes["SentTimestamp"] != "yesterday" {
		t.Errorf("malformed attributes: ReceiveCount %d, SentAt %v, raw %v", msgs[0].ReceiveCount, msgs[0].SentAt, msgs[0].Attributes)
	}
	if msgs[1].Attributes == nil {
		t.Error("Attributes is nil for a message without system attributes, want an empty map")
	}
}

func TestReceiveEmpty(t *testing.T) {
	m := newTestMailbox(t, &fakeAPI{})
	msgs, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1})
	if err != nil || len(msgs) != 0 {
		t.Fatalf("Receive = %d messages, %v; want none, nil", len(msgs), err)
	}
}

// ReceivedAt is taken before the call is sent: with a 5 s long poll it is
// the start of the poll, not its end.
func TestReceivedAtIsBeforeTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeAPI{onReceive: func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
			time.Sleep(5 * time.Second) // the server's long poll, in virtual time
			return &sqs.ReceiveMessageOutput{Messages: []types.Message{{MessageId: aws.String("m"), ReceiptHandle: aws.String("rh")}}}, nil
		}}
		m := newTestMailbox(t, f)
		start := time.Now()
		msgs, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 20 * time.Second})
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		if !msgs[0].ReceivedAt.Equal(start) {
			t.Errorf("ReceivedAt = start+%v, want the start of the call", msgs[0].ReceivedAt.Sub(start))
		}
	})
}

// blockingReceive waits for ctx like the SDK does on a long poll, and fails
// the way the SDK does: an OperationError wrapping ctx's error.
func blockingReceive(entered chan<- struct{}) func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
	return func(ctx context.Context, _ *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
		if entered != nil {
			close(entered)
		}
		<-ctx.Done()
		return nil, &smithy.OperationError{ServiceID: "SQS", OperationName: "ReceiveMessage", Err: ctx.Err()}
	}
}

func TestReceiveContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeAPI{onReceive: blockingReceive(nil)}
		m := newTestMailbox(t, f)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := m.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 20 * time.Second})
			errc <- err
		}()
		synctest.Wait()
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) || errors.Is(err, sqsloop.ErrMailboxClosed) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

func TestReceiveDoneContextMakesNoCall(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if f.calls() != 0 {
		t.Errorf("calls = %d, want 0", f.calls())
	}
}

func TestReceiveMapsCallErrors(t *testing.T) {
	f := &fakeAPI{onReceive: func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
		return nil, &smithy.OperationError{ServiceID: "SQS", OperationName: "ReceiveMessage", Err: &types.QueueDoesNotExist{Message: aws.String("The specified queue does not exist.")}}
	}}
	m := newTestMailbox(t, f)
	_, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1})
	if !errors.Is(err, sqsloop.ErrQueueNotFound) || !strings.Contains(err.Error(), testQueueURL) {
		t.Fatalf("err = %v, want ErrQueueNotFound naming %s", err, testQueueURL)
	}
}

func TestReceiveValidationJoinsEveryProblem(t *testing.T) {
	m := newTestMailbox(t, &fakeAPI{})
	_, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 0, VisibilityTimeout: -1, WaitTime: time.Minute})
	for _, field := range []string{"MaxMessages", "VisibilityTimeout", "WaitTime", "want 0 to 20s"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("err = %v, want it to name %q", err, field)
		}
	}
}
