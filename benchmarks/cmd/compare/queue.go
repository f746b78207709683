package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"golang.org/x/sync/errgroup"
)

// createQueue creates a standard queue with the given visibility timeout
// and returns its URL.
func createQueue(ctx context.Context, c *sqs.Client, name string, visibility time.Duration) (string, error) {
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName: aws.String(name),
		Attributes: map[string]string{
			string(types.QueueAttributeNameVisibilityTimeout): strconv.Itoa(int((visibility + time.Second - 1) / time.Second)),
		},
	})
	if err != nil {
		return "", fmt.Errorf("creating queue %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// preload sends bodies body(0)…body(n-1) in SendMessageBatch calls of 10,
// several at once.
func preload(ctx context.Context, c *sqs.Client, url string, n int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for start := 0; start < n; start += 10 {
		g.Go(func() error {
			var entries []types.SendMessageBatchRequestEntry
			for i := start; i < min(start+10, n); i++ {
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i - start)), MessageBody: aws.String(body(i))})
			}
			out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
			if err != nil {
				return fmt.Errorf("preloading: %w", err)
			}
			if len(out.Failed) > 0 {
				return fmt.Errorf("preloading: %d entries failed, first: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
			}
			return nil
		})
	}
	return g.Wait()
}

// depth is what GetQueueAttributes reports of a queue's messages.
type depth struct {
	visible, inFlight, delayed int
}

func (d depth) total() int { return d.visible + d.inFlight + d.delayed }

func queueDepth(ctx context.Context, c *sqs.Client, url string) (depth, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	})
	if err != nil {
		return depth{}, fmt.Errorf("reading queue depth: %w", err)
	}
	var d depth
	for name, dst := range map[types.QueueAttributeName]*int{
		types.QueueAttributeNameApproximateNumberOfMessages:           &d.visible,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible: &d.inFlight,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed:    &d.delayed,
	} {
		if v, ok := out.Attributes[string(name)]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return depth{}, fmt.Errorf("queue attribute %s=%q: %w", name, v, err)
			}
			*dst = n
		}
	}
	return d, nil
}

// settledDepth reads the queue depth until two reads settle apart agree,
// for at most settle (0: one read). SQS's approximate counts lag; fauxqs's
// do not.
func settledDepth(ctx context.Context, c *sqs.Client, url string, settle time.Duration) (depth, error) {
	d, err := queueDepth(ctx, c, url)
	if err != nil || settle <= 0 {
		return d, err
	}
	deadline := time.Now().Add(settle)
	for time.Now().Before(deadline) {
		time.Sleep(min(time.Second, settle))
		d2, err := queueDepth(ctx, c, url)
		if err != nil {
			return d, err
		}
		if d2 == d {
			return d, nil
		}
		d = d2
	}
	return d, nil
}

func deleteQueue(ctx context.Context, c *sqs.Client, url string) error {
	_, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	return err
}

// seq makes queue names unique within a run.
var (
	seqMu sync.Mutex
	seqN  int
)

func queueName(parts ...string) string {
	seqMu.Lock()
	seqN++
	n := seqN
	seqMu.Unlock()
	name := fmt.Sprintf("bench-%d-%d", time.Now().Unix(), n)
	for _, p := range parts {
		name += "-" + p
	}
	return name
}
