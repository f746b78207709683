package sqsmailbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop"
)

// QueueAttributes reads the queue's settings (VisibilityTimeout,
// DelaySeconds, MessageRetentionPeriod, MaximumMessageSize, RedrivePolicy,
// FifoQueue, ContentBasedDeduplication) and its approximate counts
// (ApproximateNumberOfMessages, …NotVisible, …Delayed: eventually
// consistent on SQS, about a minute behind at worst) with one
// GetQueueAttributes call. Attributes the queue does not report stay zero
// (no redrive policy: MaxReceiveCount 0 and DeadLetterQueue ""; standard
// queue: FIFO false). The redrive policy's maxReceiveCount is accepted as a
// JSON number or string; DeadLetterQueue is the dead-letter queue's ARN
// (deadLetterTargetArn).
//
// Errors: sqsloop.ErrMailboxClosed after Close, sqsloop.ErrQueueNotFound
// (naming the queue URL), sqsloop.ErrAccessDenied (no sqs:GetQueueAttributes
// permission, or no credentials), ctx's error, a transient failure (see
// Mailbox for the table), or an error naming the attribute when the answer
// holds a malformed value. Safe for concurrent use.
func (m *Mailbox) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	return m.readAttributes(ctx, "get attributes of", attributeNames)
}

// readAttributes reads the attributes names with one GetQueueAttributes
// call, for op; those not asked for stay zero.
func (m *Mailbox) readAttributes(ctx context.Context, op string, names []types.QueueAttributeName) (sqsloop.QueueAttributes, error) {
	if err := m.checkOpen(op); err != nil {
		return sqsloop.QueueAttributes{}, err
	}
	start := time.Now()
	out, err := m.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(m.queueURL),
		AttributeNames: names,
	}, callOptions...)
	m.observe(start, err)
	if err != nil {
		return sqsloop.QueueAttributes{}, m.callError(op, err)
	}
	var attrs map[string]string
	if out != nil {
		attrs = out.Attributes
	}
	qa, err := parseQueueAttributes(attrs)
	if err != nil {
		return sqsloop.QueueAttributes{}, fmt.Errorf("sqsmailbox: %s %s: %w", op, m.queueURL, err)
	}
	return qa, nil
}

// attributeNames are the attributes QueueAttributes asks for.
var attributeNames = []types.QueueAttributeName{
	types.QueueAttributeNameVisibilityTimeout,
	types.QueueAttributeNameDelaySeconds,
	types.QueueAttributeNameMessageRetentionPeriod,
	types.QueueAttributeNameMaximumMessageSize,
	types.QueueAttributeNameRedrivePolicy,
	types.QueueAttributeNameFifoQueue,
	types.QueueAttributeNameContentBasedDeduplication,
	types.QueueAttributeNameApproximateNumberOfMessages,
	types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
}

// parseQueueAttributes maps GetQueueAttributes' answer to QueueAttributes.
func parseQueueAttributes(attrs map[string]string) (sqsloop.QueueAttributes, error) {
	var qa sqsloop.QueueAttributes
	var err error
	if qa.VisibilityTimeout, err = secondsAttr(attrs, string(types.QueueAttributeNameVisibilityTimeout)); err != nil {
		return qa, err
	}
	if qa.Delay, err = secondsAttr(attrs, string(types.QueueAttributeNameDelaySeconds)); err != nil {
		return qa, err
	}
	if qa.RetentionPeriod, err = secondsAttr(attrs, string(types.QueueAttributeNameMessageRetentionPeriod)); err != nil {
		return qa, err
	}
	for _, c := range []struct {
		name types.QueueAttributeName
		to   *int
	}{
		{types.QueueAttributeNameMaximumMessageSize, &qa.MaxMessageSize},
		{types.QueueAttributeNameApproximateNumberOfMessages, &qa.ApproximateMessages},
		{types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, &qa.ApproximateMessagesInFlight},
		{types.QueueAttributeNameApproximateNumberOfMessagesDelayed, &qa.ApproximateMessagesDelayed},
	} {
		if *c.to, err = countAttr(attrs, string(c.name)); err != nil {
			return qa, err
		}
	}
	for _, b := range []struct {
		name types.QueueAttributeName
		to   *bool
	}{
		{types.QueueAttributeNameFifoQueue, &qa.FIFO},
		{types.QueueAttributeNameContentBasedDeduplication, &qa.ContentBasedDeduplication},
	} {
		if v, ok := attrs[string(b.name)]; ok {
			if *b.to, err = strconv.ParseBool(v); err != nil {
				return qa, fmt.Errorf("attribute %s = %q: want true or false", b.name, v)
			}
		}
	}
	if v := attrs[string(types.QueueAttributeNameRedrivePolicy)]; v != "" {
		if qa.DeadLetterQueue, qa.MaxReceiveCount, err = parseRedrivePolicy(v); err != nil {
			return qa, err
		}
	}
	return qa, nil
}

// countAttr reads a whole number attribute, 0 or more; 0 when absent.
func countAttr(attrs map[string]string, name string) (int, error) {
	v, ok := attrs[name]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("attribute %s = %q: want a whole number, 0 or more", name, v)
	}
	return n, nil
}

func secondsAttr(attrs map[string]string, name string) (time.Duration, error) {
	v, ok := attrs[name]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("attribute %s = %q: want whole seconds, 0 or more", name, v)
	}
	return time.Duration(n) * time.Second, nil
}

// parseRedrivePolicy reads the RedrivePolicy attribute, a JSON object such as
// {"deadLetterTargetArn":"arn:aws:sqs:…:dlq","maxReceiveCount":5}. SQS itself
// answers maxReceiveCount as a number, some servers and tools as a string
// ("5"); both are accepted.
func parseRedrivePolicy(v string) (dlq string, maxReceiveCount int, err error) {
	var p struct {
		DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return "", 0, fmt.Errorf("attribute RedrivePolicy: not a JSON object: %w", err)
	}
	raw := strings.Trim(strings.TrimSpace(string(p.MaxReceiveCount)), `"`)
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("attribute RedrivePolicy: maxReceiveCount = %s: want a whole number, 1 or more", p.MaxReceiveCount)
	}
	return p.DeadLetterTargetArn, n, nil
}
