package sqsmailbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop"
)

// BenchmarkReceive measures the mailbox's own cost of a 10-message receive
// (request building, mapping, binding) over an in-process fake.
func BenchmarkReceive(b *testing.B) {
	msgs := make([]types.Message, 10)
	for i := range msgs {
		msgs[i] = types.Message{
			MessageId: aws.String(fmt.Sprint(i)), Body: aws.String("body"), ReceiptHandle: aws.String("rh"),
			Attributes:        map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1700000000000", "ApproximateFirstReceiveTimestamp": "1700000000001"},
			MessageAttributes: map[string]types.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}},
		}
	}
	out := &sqs.ReceiveMessageOutput{Messages: msgs}
	f := &fakeAPI{onReceive: func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) { return out, nil }}
	m, _ := New(f, testQueueURL)
	req := sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute}
	for b.Loop() {
		if _, err := m.Receive(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		f.receives, f.receiveOpt = f.receives[:0], f.receiveOpt[:0]
	}
}

// BenchmarkDelete measures a 10-entry ack batch with one failed entry.
func BenchmarkDelete(b *testing.B) {
	out := &sqs.DeleteMessageBatchOutput{Failed: []types.BatchResultErrorEntry{failure("3", "ReceiptHandleIsInvalid", "stale", true)}}
	for i := range 10 {
		if i != 3 {
			out.Successful = append(out.Successful, types.DeleteMessageBatchResultEntry{Id: aws.String(fmt.Sprint(i))})
		}
	}
	f := &fakeAPI{onDelete: func(context.Context, *sqs.DeleteMessageBatchInput) (*sqs.DeleteMessageBatchOutput, error) {
		return out, nil
	}}
	m, _ := New(f, testQueueURL)
	hs := handles(10)
	for b.Loop() {
		if _, err := m.Delete(context.Background(), hs); err != nil {
			b.Fatal(err)
		}
		f.deletes = f.deletes[:0]
	}
}
