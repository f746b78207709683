package sqsmailbox

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop"
)

func attrsAnswer(attrs map[string]string) func(context.Context, *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error) {
	return func(context.Context, *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error) {
		return &sqs.GetQueueAttributesOutput{Attributes: attrs}, nil
	}
}

func TestQueueAttributes(t *testing.T) {
	const dlq = "arn:aws:sqs:us-east-1:123456789012:jobs-dlq"
	cases := []struct {
		name  string
		attrs map[string]string
		want  sqsloop.QueueAttributes
	}{
		{"numeric maxReceiveCount", map[string]string{
			"VisibilityTimeout": "45", "DelaySeconds": "5",
			"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":5}`,
		}, sqsloop.QueueAttributes{VisibilityTimeout: 45 * time.Second, Delay: 5 * time.Second, MaxReceiveCount: 5, DeadLetterQueue: dlq}},
		{"string maxReceiveCount", map[string]string{
			"VisibilityTimeout": "30",
			"RedrivePolicy":     `{"maxReceiveCount":"7", "deadLetterTargetArn":"` + dlq + `"}`,
		}, sqsloop.QueueAttributes{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 7, DeadLetterQueue: dlq}},
		{"FIFO without redrive", map[string]string{
			"VisibilityTimeout": "43200", "DelaySeconds": "900", "FifoQueue": "true", "ContentBasedDeduplication": "true",
		}, sqsloop.QueueAttributes{VisibilityTimeout: 12 * time.Hour, Delay: 15 * time.Minute, FIFO: true, ContentBasedDeduplication: true}},
		{"retention, size and counts", map[string]string{
			"MessageRetentionPeriod": "1209600", "MaximumMessageSize": "2048", "ApproximateNumberOfMessages": "12",
			"ApproximateNumberOfMessagesNotVisible": "3", "ApproximateNumberOfMessagesDelayed": "1",
		}, sqsloop.QueueAttributes{RetentionPeriod: 14 * 24 * time.Hour, MaxMessageSize: 2048, ApproximateMessages: 12,
			ApproximateMessagesInFlight: 3, ApproximateMessagesDelayed: 1}},
		{"nothing reported", nil, sqsloop.QueueAttributes{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeAPI{onAttrs: attrsAnswer(c.attrs)}
			m := newTestMailbox(t, f)
			got, err := m.QueueAttributes(t.Context())
			if err != nil {
				t.Fatalf("QueueAttributes: %v", err)
			}
			if got != c.want {
				t.Errorf("QueueAttributes = %+v, want %+v", got, c.want)
			}
			want := []types.QueueAttributeName{"VisibilityTimeout", "DelaySeconds", "MessageRetentionPeriod", "MaximumMessageSize",
				"RedrivePolicy", "FifoQueue", "ContentBasedDeduplication", "ApproximateNumberOfMessages",
				"ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"}
			if in := f.attrs[0].AttributeNames; !slices.Equal(in, want) {
				t.Errorf("AttributeNames = %v, want %v", in, want)
			}
		})
	}
}

func TestQueueAttributesMalformed(t *testing.T) {
	cases := []struct {
		name  string
		attrs map[string]string
		field string
	}{
		{"visibility", map[string]string{"VisibilityTimeout": "soon"}, "VisibilityTimeout"},
		{"negative delay", map[string]string{"DelaySeconds": "-1"}, "DelaySeconds"},
		{"fifo", map[string]string{"FifoQueue": "maybe"}, "FifoQueue"},
		{"dedup", map[string]string{"ContentBasedDeduplication": "1.0"}, "ContentBasedDeduplication"},
		{"size", map[string]string{"MaximumMessageSize": "big"}, "MaximumMessageSize"},
		{"negative count", map[string]string{"ApproximateNumberOfMessages": "-2"}, "ApproximateNumberOfMessages"},
		{"redrive not JSON", map[string]string{"RedrivePolicy": "{"}, "RedrivePolicy"},
		{"redrive without count", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn"}`}, "maxReceiveCount"},
		{"redrive count not a number", map[string]string{"RedrivePolicy": `{"maxReceiveCount":"five"}`}, "maxReceiveCount"},
		{"redrive count zero", map[string]string{"RedrivePolicy": `{"maxReceiveCount":0}`}, "maxReceiveCount"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newTestMailbox(t, &fakeAPI{onAttrs: attrsAnswer(c.attrs)})
			_, err := m.QueueAttributes(t.Context())
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want an error naming %s", err, c.field)
			}
		})
	}
}

func TestOpenDeadLetterQueueFindsTheARNsQueue(t *testing.T) {
	const dlqURL = "https://sqs.us-east-1.amazonaws.com/123456789012/jobs-dlq"
	f := &fakeAPI{
		onAttrs: attrsAnswer(map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:jobs-dlq","maxReceiveCount":3}`}),
		onURL: func(_ context.Context, in *sqs.GetQueueUrlInput) (*sqs.GetQueueUrlOutput, error) {
			if *in.QueueName != "jobs-dlq" || *in.QueueOwnerAWSAccountId != "123456789012" {
				t.Errorf("GetQueueUrl(%q, owner %q), want jobs-dlq of 123456789012", *in.QueueName, *in.QueueOwnerAWSAccountId)
			}
			return &sqs.GetQueueUrlOutput{QueueUrl: aws.String(dlqURL)}, nil
		},
	}
	m := newTestMailbox(t, f)
	dlq, err := m.OpenDeadLetterQueue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := dlq.(*Mailbox).QueueURL(); got != dlqURL {
		t.Errorf("DLQ URL = %s, want %s", got, dlqURL)
	}
	if asked := f.attrs[0].AttributeNames; len(asked) != 1 || asked[0] != types.QueueAttributeNameRedrivePolicy {
		t.Errorf("GetQueueAttributes asked for %v, want RedrivePolicy alone", asked)
	}

	for _, target := range []string{"jobs-dlq", "arn:aws:sns:us-east-1:123456789012:jobs-dlq", "arn:aws:sqs:us-east-1:123456789012:"} {
		f.onAttrs = attrsAnswer(map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + target + `","maxReceiveCount":3}`})
		if _, err := m.OpenDeadLetterQueue(t.Context()); err == nil || !strings.Contains(err.Error(), "not an SQS queue ARN") {
			t.Errorf("a deadLetterTargetArn %q that is no SQS queue ARN: %v", target, err)
		}
	}
	f.onAttrs = attrsAnswer(nil)
	if _, err := m.OpenDeadLetterQueue(t.Context()); !errors.Is(err, sqsloop.ErrNoDeadLetterQueue) || !strings.Contains(err.Error(), testQueueURL) {
		t.Errorf("no redrive policy: %v, want ErrNoDeadLetterQueue naming the queue", err)
	}
}
