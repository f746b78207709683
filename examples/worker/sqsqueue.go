package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// sqsQueue is a real SQS queue (or an SQS-compatible server's) named by its
// URL; the dead-letter queue is found through its redrive policy.
type sqsQueue struct {
	client    *sqs.Client
	mb        *sqsmailbox.Mailbox
	url       string
	dlqURL    string // empty without a redrive policy
	dlqBefore int    // messages in the dead-letter queue when the run began
}

func newSQSQueue(ctx context.Context, endpoint, url string) (*sqsQueue, error) {
	client, err := sqsmailbox.NewClient(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	mb, err := sqsmailbox.New(client, url)
	if err != nil {
		return nil, err
	}
	q := &sqsQueue{client: client, mb: mb, url: url}
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy},
	})
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", url, err)
	}
	if policy := out.Attributes[string(types.QueueAttributeNameRedrivePolicy)]; policy != "" {
		var p struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		}
		if err := json.Unmarshal([]byte(policy), &p); err != nil {
			return nil, fmt.Errorf("queue %s: redrive policy: %w", url, err)
		}
		name := p.DeadLetterTargetArn[strings.LastIndex(p.DeadLetterTargetArn, ":")+1:]
		dlq, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("dead-letter queue %s: %w", name, err)
		}
		q.dlqURL = aws.ToString(dlq.QueueUrl)
		// It may hold messages of earlier runs: count from here.
		if q.dlqBefore, err = q.count(ctx, q.dlqURL, types.QueueAttributeNameApproximateNumberOfMessages); err != nil {
			return nil, fmt.Errorf("dead-letter queue %s: %w", name, err)
		}
	}
	return q, nil
}

func (q *sqsQueue) mailbox() sqsloop.Mailbox { return q.mb }
func (q *sqsQueue) exact() bool              { return false }
func (q *sqsQueue) close()                   { q.mb.Close() }

func (q *sqsQueue) backlog(ctx context.Context) (int, error) {
	return q.count(ctx, q.url,
		types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed)
}

func (q *sqsQueue) deadLettered(ctx context.Context) (int, error) {
	if q.dlqURL == "" {
		return 0, nil
	}
	n, err := q.count(ctx, q.dlqURL, types.QueueAttributeNameApproximateNumberOfMessages)
	return n - q.dlqBefore, err
}

// count sums the named approximate counts of the queue at url.
func (q *sqsQueue) count(ctx context.Context, url string, names ...types.QueueAttributeName) (int, error) {
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: names})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, n := range names {
		v, err := strconv.Atoi(out.Attributes[string(n)])
		if err != nil {
			return 0, fmt.Errorf("attribute %s: %w", n, err)
		}
		total += v
	}
	return total, nil
}
