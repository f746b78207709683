package sqsmailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	// Only the system attributes Message reads (and the trace header), not
	// All; every message attribute by default.
	if got := fmt.Sprint(in.MessageSystemAttributeNames); got != "[ApproximateReceiveCount ApproximateFirstReceiveTimestamp SentTimestamp MessageGroupId MessageDeduplicationId SequenceNumber AWSTraceHeader]" {
		t.Errorf("MessageSystemAttributeNames = %v", got)
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

// answerAfter is a ReceiveMessage that answers one message d after the
// request (in virtual time, under synctest): the server's long poll, or the
// network.
func answerAfter(d time.Duration) func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
	return func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
		time.Sleep(d)
		return &sqs.ReceiveMessageOutput{Messages: []types.Message{{MessageId: aws.String("m"), ReceiptHandle: aws.String("rh")}}}, nil
	}
}

// receiveTimes makes one Receive and returns when it was sent, when it
// returned, and the ReceivedAt of its message.
func receiveTimes(t *testing.T, m *Mailbox, wait time.Duration) (sentAt, arrivedAt, receivedAt time.Time) {
	t.Helper()
	sentAt = time.Now()
	msgs, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: 3 * time.Second, WaitTime: wait})
	arrivedAt = time.Now()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Receive = %d messages, %v; want 1", len(msgs), err)
	}
	return sentAt, arrivedAt, msgs[0].ReceivedAt
}

// A message that arrives 15 s into a long poll: SQS started its visibility
// timeout when it answered, not when the request was sent. Before any round
// trip is measured, ReceivedAt is at most 1 s (RFC 6298's initial bound)
// before the answer arrived, never after it. (Stamping the request's time,
// the lease would be 15 s short: a 3 s lease lost on arrival.)
func TestReceivedAtLongPollBeforeAnySample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newTestMailbox(t, &fakeAPI{onReceive: answerAfter(15 * time.Second)})
		_, arrivedAt, receivedAt := receiveTimes(t, m, 20*time.Second)
		if receivedAt.After(arrivedAt) || receivedAt.Before(arrivedAt.Add(-time.Second)) {
			t.Errorf("ReceivedAt = arrival%v, want within [arrival-1s, arrival]", receivedAt.Sub(arrivedAt))
		}
	})
}

// Once calls that do not wait on the server have answered in about 10 ms,
// the bound is a few ms: ReceivedAt after a long poll is within a few ms of
// the answer's arrival, yet no later than arrival minus a round trip.
func TestReceivedAtAfterMeasuredRoundTrips(t *testing.T) {
	const rtt = 10 * time.Millisecond
	sleepThen := func() { time.Sleep(rtt) }
	throttled := &smithy.OperationError{ServiceID: "SQS", OperationName: "Op", Err: generic("ThrottlingException", "Rate exceeded")}
	sources := []struct {
		name string
		f    *fakeAPI
		call func(context.Context, *Mailbox)
	}{
		{"Delete", &fakeAPI{onDelete: func(context.Context, *sqs.DeleteMessageBatchInput) (*sqs.DeleteMessageBatchOutput, error) {
			sleepThen()
			return &sqs.DeleteMessageBatchOutput{Successful: []types.DeleteMessageBatchResultEntry{{Id: aws.String("0")}}}, nil
		}}, func(ctx context.Context, m *Mailbox) { _, _ = m.Delete(ctx, []string{"rh"}) }},
		{"Delete answered with an SQS error", &fakeAPI{onDelete: func(context.Context, *sqs.DeleteMessageBatchInput) (*sqs.DeleteMessageBatchOutput, error) {
			sleepThen()
			return nil, throttled
		}}, func(ctx context.Context, m *Mailbox) { _, _ = m.Delete(ctx, []string{"rh"}) }},
		{"ChangeVisibility", &fakeAPI{onChange: func(context.Context, *sqs.ChangeMessageVisibilityBatchInput) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
			sleepThen()
			return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
		}}, func(ctx context.Context, m *Mailbox) {
			_, _ = m.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: "rh"}})
		}},
		{"Send", &fakeAPI{onSend: func(context.Context, *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
			sleepThen()
			return &sqs.SendMessageBatchOutput{}, nil
		}}, func(ctx context.Context, m *Mailbox) { _, _ = m.Send(ctx, []sqsloop.OutgoingMessage{{Body: "b"}}) }},
		{"QueueAttributes", &fakeAPI{onAttrs: func(context.Context, *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error) {
			sleepThen()
			return &sqs.GetQueueAttributesOutput{}, nil
		}}, func(ctx context.Context, m *Mailbox) { _, _ = m.QueueAttributes(ctx) }},
		{"short poll", &fakeAPI{onReceive: func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
			sleepThen()
			return &sqs.ReceiveMessageOutput{}, nil
		}}, func(ctx context.Context, m *Mailbox) { _, _ = m.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1}) }},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newTestMailbox(t, src.f)
				for range 10 {
					src.call(t.Context(), m)
				}
				src.f.mu.Lock()
				src.f.onReceive = answerAfter(15 * time.Second)
				src.f.mu.Unlock()
				_, arrivedAt, receivedAt := receiveTimes(t, m, 20*time.Second)
				if early := arrivedAt.Sub(receivedAt); early < rtt || early > 2*rtt {
					t.Errorf("ReceivedAt = arrival-%v, want arrival minus %v to %v", early, rtt, 2*rtt)
				}
			})
		})
	}
}

// An answer that comes back faster than the bound keeps ReceivedAt at the
// moment the request was sent: SQS cannot have started the visibility
// timeout before that.
func TestReceivedAtFastAnswerIsSentAt(t *testing.T) {
	for _, c := range []struct {
		name        string
		wait, after time.Duration
	}{
		{"short poll", 0, 5 * time.Millisecond},
		{"long poll answered at once", 20 * time.Second, 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newTestMailbox(t, &fakeAPI{onReceive: answerAfter(c.after)})
				sentAt, _, receivedAt := receiveTimes(t, m, c.wait)
				if !receivedAt.Equal(sentAt) {
					t.Errorf("ReceivedAt = sentAt%+v, want sentAt", receivedAt.Sub(sentAt))
				}
			})
		})
	}
}

// A long poll's duration includes the server's wait, so it is no round-trip
// sample: after two 15 s polls the bound is still the initial 1 s (a sample
// of 15 s would have made it 45 s, and ReceivedAt the request's time).
func TestReceivedAtLongPollIsNotASample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newTestMailbox(t, &fakeAPI{onReceive: answerAfter(15 * time.Second)})
		for range 2 {
			_, arrivedAt, receivedAt := receiveTimes(t, m, 20*time.Second)
			if !receivedAt.Equal(arrivedAt.Add(-time.Second)) {
				t.Errorf("ReceivedAt = arrival%v, want arrival-1s", receivedAt.Sub(arrivedAt))
			}
		}
	})
}

// A call that got no answer (cancelled, or failed in transport) is no
// sample either: its duration says nothing about the round trip.
func TestReceivedAtUnansweredCallIsNotASample(t *testing.T) {
	cases := []struct {
		name string
		call func(*testing.T, *fakeAPI, *Mailbox)
	}{
		{"cancelled Delete", func(t *testing.T, f *fakeAPI, m *Mailbox) {
			f.onDelete = func(ctx context.Context, _ *sqs.DeleteMessageBatchInput) (*sqs.DeleteMessageBatchOutput, error) {
				<-ctx.Done()
				return nil, &smithy.OperationError{ServiceID: "SQS", OperationName: "DeleteMessageBatch", Err: ctx.Err()}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
			defer cancel()
			if _, err := m.Delete(ctx, []string{"rh"}); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Delete = %v, want DeadlineExceeded", err)
			}
		}},
		{"cancelled short poll", func(t *testing.T, f *fakeAPI, m *Mailbox) {
			f.onReceive = blockingReceive(nil)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
			defer cancel()
			if _, err := m.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1}); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Receive = %v, want DeadlineExceeded", err)
			}
		}},
		{"transport failure", func(t *testing.T, f *fakeAPI, m *Mailbox) {
			f.onChange = func(context.Context, *sqs.ChangeMessageVisibilityBatchInput) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
				time.Sleep(5 * time.Millisecond)
				return nil, &smithy.OperationError{ServiceID: "SQS", OperationName: "ChangeMessageVisibilityBatch", Err: errors.New("connection reset by peer")}
			}
			if _, err := m.ChangeVisibility(t.Context(), []sqsloop.VisibilityChange{{ReceiptHandle: "rh"}}); err == nil {
				t.Fatal("ChangeVisibility = nil error, want the transport failure")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeAPI{}
				m := newTestMailbox(t, f)
				for range 10 {
					c.call(t, f, m)
				}
				f.mu.Lock()
				f.onReceive = answerAfter(15 * time.Second)
				f.mu.Unlock()
				_, arrivedAt, receivedAt := receiveTimes(t, m, 20*time.Second)
				if !receivedAt.Equal(arrivedAt.Add(-time.Second)) {
					t.Errorf("ReceivedAt = arrival%v, want arrival-1s (no sample taken)", receivedAt.Sub(arrivedAt))
				}
			})
		})
	}
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
	for _, field := range []string{"MaxMessages", "VisibilityTimeout", "WaitTime", "must be between 0 and 20s"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("err = %v, want it to name %q", err, field)
		}
	}
}

// ReceiveRequest.MessageAttributeNames becomes SQS's MessageAttributeNames:
// nil asks for All, an empty slice for none (the field is not sent), names
// are sent as they are.
func TestReceiveMessageAttributeNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, "[All]"},
		{[]string{}, "[]"},
		{[]string{"order.*", "trace"}, "[order.* trace]"},
	} {
		f := &fakeAPI{}
		m := newTestMailbox(t, f)
		if _, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1, MessageAttributeNames: tc.names}); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(f.receives[0].MessageAttributeNames); got != tc.want {
			t.Errorf("names %q: sent %s, want %s", tc.names, got, tc.want)
		}
	}
}
