package sqsmailbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/sqsloop/sqsloop"
)

var _ sqsloop.DeadLetterQueueOpener = (*Mailbox)(nil)

// CreateQueue sets up the queue spec describes on SQS and returns a Mailbox
// of it: with spec.MaxReceiveCount above 0, first its dead-letter queue
// (spec.DeadLetterSpec(): named spec.DeadLetterQueueName(), the same type,
// 14 days' retention), then the queue with a redrive policy to it. Every
// attribute spec sets is sent explicitly (its defaults applied), so the
// queues are the same whatever the server's defaults. It is for
// development, tests and examples; production queues usually come from
// infrastructure as code. It takes the SDK's client itself: the Mailbox
// it returns calls it through API, which a recording fake can stand for
// (New), but setting a queue up is a job for a real server.
//
// It is idempotent: a queue that exists with the attributes spec gives it
// is reused. Each queue's attributes are read back after its CreateQueue
// (SQS refuses an existing name with other attributes, QueueAlreadyExists;
// some emulators accept it silently), and compared with spec.Match, so a
// queue that exists with other attributes is an error wrapping
// sqsloop.ErrInvalidArgument that names the queue and every attribute that
// differs.
//
// Other errors: spec.Validate's (wrapping sqsloop.ErrInvalidArgument, naming
// each field and its range) and, with spec.Priority, an error wrapping
// sqsloop.ErrInvalidArgument that names it (SQS has no priorities), before
// any call; the calls' errors, mapped as
// for Mailbox (sqsloop.ErrAccessDenied without sqs:CreateQueue,
// sqs:GetQueueAttributes or sqs:GetQueueUrl permission, transient failures
// without a sentinel), naming the queue. A dead-letter queue made before the
// queue's own CreateQueue failed is left in place (a later call reuses
// it). The client is kept by the Mailbox. Safe for concurrent use, though
// two calls racing to create one queue may both fail on a server that
// refuses a concurrent create.
func CreateQueue(ctx context.Context, client *sqs.Client, spec sqsloop.QueueSpec) (*Mailbox, error) {
	if err := errors.Join(spec.Validate(), refusePriority(spec)); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("sqsmailbox: CreateQueue: client: must not be nil: %w", sqsloop.ErrInvalidArgument)
	}
	var redrive string
	if spec.MaxReceiveCount > 0 {
		_, arn, err := ensureQueue(ctx, client, spec.DeadLetterSpec(), "")
		if err != nil {
			return nil, err
		}
		policy, err := json.Marshal(map[string]string{"deadLetterTargetArn": arn, "maxReceiveCount": strconv.Itoa(spec.MaxReceiveCount)})
		if err != nil {
			return nil, fmt.Errorf("sqsmailbox: CreateQueue %q: redrive policy: %w", spec.Name, err)
		}
		redrive = string(policy)
	}
	url, _, err := ensureQueue(ctx, client, spec, redrive)
	if err != nil {
		return nil, err
	}
	return New(client, url)
}

// ensureQueue creates the queue spec describes (with the redrive policy
// redrive, if not empty) or finds it, checks its attributes against spec,
// and returns its URL and ARN.
func ensureQueue(ctx context.Context, client *sqs.Client, spec sqsloop.QueueSpec, redrive string) (url, arn string, err error) {
	w := spec.WithDefaults()
	attrs := map[string]string{
		string(types.QueueAttributeNameVisibilityTimeout):      wholeSeconds(w.VisibilityTimeout.Seconds()),
		string(types.QueueAttributeNameDelaySeconds):           wholeSeconds(w.Delay.Seconds()),
		string(types.QueueAttributeNameMessageRetentionPeriod): wholeSeconds(w.RetentionPeriod.Seconds()),
		string(types.QueueAttributeNameMaximumMessageSize):     strconv.Itoa(w.MaxMessageSize),
	}
	if w.FIFO {
		attrs[string(types.QueueAttributeNameFifoQueue)] = "true"
		attrs[string(types.QueueAttributeNameContentBasedDeduplication)] = strconv.FormatBool(w.ContentBasedDeduplication)
	}
	if redrive != "" {
		attrs[string(types.QueueAttributeNameRedrivePolicy)] = redrive
	}
	fail := func(op string, err error) (string, string, error) {
		return "", "", wrapCall(fmt.Sprintf("CreateQueue %q: %s", spec.Name, op), err)
	}
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(spec.Name), Attributes: attrs}, callOptions...)
	switch {
	case err == nil:
		url = aws.ToString(out.QueueUrl)
	case queueExists(err):
		// It exists with other attributes: find it, to say which.
		found, uerr := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(spec.Name)}, callOptions...)
		if uerr != nil {
			return fail("CreateQueue", errors.Join(err, uerr))
		}
		url = aws.ToString(found.QueueUrl)
	default:
		return fail("CreateQueue", err)
	}
	got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(url),
		AttributeNames: append([]types.QueueAttributeName{types.QueueAttributeNameQueueArn}, attributeNames...),
	}, callOptions...)
	if err != nil {
		return fail("GetQueueAttributes "+url, err)
	}
	qa, err := parseQueueAttributes(got.Attributes)
	if err != nil {
		return "", "", fmt.Errorf("sqsmailbox: CreateQueue %q: %s: %w", spec.Name, url, err)
	}
	if err := spec.Match(qa); err != nil {
		return "", "", fmt.Errorf("sqsmailbox: CreateQueue %s: %w", url, err)
	}
	if arn = got.Attributes[string(types.QueueAttributeNameQueueArn)]; arn == "" {
		return "", "", fmt.Errorf("sqsmailbox: CreateQueue %s: no QueueArn in the GetQueueAttributes answer", url)
	}
	return url, arn, nil
}

// wholeSeconds formats a whole number of seconds (WithDefaults rounded the
// durations up) as SQS attributes want it.
func wholeSeconds(s float64) string { return strconv.FormatInt(int64(s), 10) }

// queueExists reports whether err is SQS's answer to a CreateQueue of an
// existing queue with other attributes: QueueNameExists, sent by SQS as
// QueueAlreadyExists.
func queueExists(err error) bool {
	if as[*types.QueueNameExists](err) {
		return true
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode() {
	case "QueueAlreadyExists", "QueueNameExists", "AWS.SimpleQueueService.QueueNameExists":
		return true
	}
	return false
}

// OpenDeadLetterQueue returns a Mailbox of the dead-letter queue that the
// queue's redrive policy names (see sqsloop.DeadLetterQueueOpener): it reads
// the RedrivePolicy (GetQueueAttributes of that one attribute) and finds the
// queue behind its deadLetterTargetArn (GetQueueUrl with the ARN's queue
// name and account), two calls; the new Mailbox shares this one's client.
// The caller closes it; closing either leaves the other open.
//
// Errors: one wrapping sqsloop.ErrNoDeadLetterQueue and naming the queue URL
// when the queue has no redrive policy; an error naming the ARN when it is
// not an SQS queue ARN; otherwise as for QueueAttributes
// (sqsloop.ErrMailboxClosed, sqsloop.ErrQueueNotFound — also for a
// dead-letter queue that no longer exists —, sqsloop.ErrAccessDenied,
// transient failures). Safe for concurrent use.
func (m *Mailbox) OpenDeadLetterQueue(ctx context.Context) (sqsloop.Mailbox, error) {
	const op = "open the dead-letter queue of"
	qa, err := m.readAttributes(ctx, op, []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy})
	if err != nil {
		return nil, err
	}
	if qa.DeadLetterQueue == "" {
		return nil, fmt.Errorf("sqsmailbox: %s %s: %w", op, m.queueURL, sqsloop.ErrNoDeadLetterQueue)
	}
	// arn:aws:sqs:region:account:name
	a, err := arn.Parse(qa.DeadLetterQueue)
	if err != nil || a.Service != "sqs" || a.Resource == "" {
		return nil, fmt.Errorf("sqsmailbox: %s %s: deadLetterTargetArn %q: not an SQS queue ARN", op, m.queueURL, qa.DeadLetterQueue)
	}
	in := &sqs.GetQueueUrlInput{QueueName: aws.String(a.Resource)}
	if a.AccountID != "" {
		in.QueueOwnerAWSAccountId = aws.String(a.AccountID)
	}
	start := time.Now()
	out, err := m.client.GetQueueUrl(ctx, in, callOptions...)
	m.observe(start, err)
	if err != nil {
		return nil, m.callError(op, err)
	}
	return New(m.client, aws.ToString(out.QueueUrl))
}

// refusePriority returns the error of a spec asking for priorities, which
// SQS has not: a program counting on them is told at setup rather than
// served in another order.
func refusePriority(spec sqsloop.QueueSpec) error {
	if !spec.Priority {
		return nil
	}
	return fmt.Errorf("sqsmailbox: CreateQueue %q: QueueSpec.Priority: must be false on sqsmailbox, since SQS has no priorities (sqlmailbox keeps them), got true: %w",
		spec.Name, sqsloop.ErrInvalidArgument)
}
