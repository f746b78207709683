package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// SQSHarness runs the conformance suite on sqsmailbox against a real
// SQS-compatible server, in real time, each scenario on queues of its own
// (created with CreateQueue, deleted at cleanup). Build it with
// NewSQSHarness. Safe for concurrent use.
type SQSHarness struct {
	server *SQSServer
	client *sqs.Client
}

// NewSQSHarness returns a harness on server, whose client is built with
// sqsmailbox.NewClient (so AWS_CA_BUNDLE and the rest of the SDK's
// configuration apply). Errors are NewClient's.
func NewSQSHarness(ctx context.Context, server *SQSServer) (*SQSHarness, error) {
	client, err := sqsmailbox.NewClient(ctx, server.Endpoint, server.ConfigOptions()...)
	if err != nil {
		return nil, err
	}
	return &SQSHarness{server: server, client: client}, nil
}

// Client returns the SQS client the harness creates queues and mailboxes
// with. Safe for concurrent use.
func (h *SQSHarness) Client() *sqs.Client { return h.client }

// Name returns "sqsmailbox/" and the server's kind, e.g. "sqsmailbox/fauxqs".
func (h *SQSHarness) Name() string { return "sqsmailbox/" + h.server.Kind }

// Features declares what the server is known to do, by its kind (so a
// fauxqs reached through SQS_ENDPOINT needs SQS_SERVER=fauxqs). Amazon SQS
// (and any other server, taken to be like it) supports everything and
// enforces the 12-hour lease ceiling; fauxqs 2.4.1 does not enforce the
// ceiling and returns at most one message per FIFO group per receive.
func (h *SQSHarness) Features() Features {
	f := Features{
		FIFO:                   true,
		DLQ:                    true,
		AttributesReader:       true,
		LeaseCeiling:           true,
		FIFOBatchesWithinGroup: true,
		RedriveKeepsMessageID:  true,
	}
	if h.server.Kind == KindFauxqs {
		f.LeaseCeiling = false
		f.FIFOBatchesWithinGroup = false
	}
	return f
}

// Run calls body directly: a real server runs on the wall clock.
func (h *SQSHarness) Run(t *testing.T, body func(t *testing.T)) { body(t) }

// Sleep waits d on the wall clock, or until ctx is done.
func (h *SQSHarness) Sleep(ctx context.Context, d time.Duration) error { return sleepCtx(ctx, d) }

// NewQueue creates the queue (and its DLQ) on the server with attributes from
// opts, and returns sqsmailbox mailboxes for them. cleanup closes the
// mailboxes and deletes the queues.
func (h *SQSHarness) NewQueue(ctx context.Context, t testing.TB, opts QueueOptions) (Queue, func()) {
	t.Helper()
	return NewSQSQueue(ctx, t, h.client, opts)
}

var unsafeQueueChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// queueName makes a queue name unique to this run from the test's name:
// letters, digits, '-' and '_', at most 80 characters with the ".fifo"
// suffix (SQS's rules). SQS refuses to reuse a deleted queue's name for 60 s,
// hence the random part.
func queueName(t testing.TB, suffix string, fifo bool) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	base := unsafeQueueChars.ReplaceAllString(t.Name(), "-")
	tail := "-" + hex.EncodeToString(r[:]) + suffix
	if fifo {
		tail += ".fifo"
	}
	if room := 80 - len("sqsloop-") - len(tail); len(base) > room {
		base = base[len(base)-room:]
	}
	return "sqsloop-" + base + tail
}

// NewSQSQueue creates a queue configured by opts through client (and its DLQ
// when opts.MaxReceiveCount > 0), and returns sqsmailbox mailboxes for them;
// for tests that want a real-server queue without the Harness interface (the
// end-to-end consumer tests). It fails t on any error. cleanup closes the
// mailboxes and deletes the queues, with a context of its own (it may run
// after ctx is done).
func NewSQSQueue(ctx context.Context, t testing.TB, client *sqs.Client, opts QueueOptions) (Queue, func()) {
	t.Helper()
	var urls []string
	var q Queue
	cleanup := func() {
		for _, mb := range []interface{ Close() error }{q.Mailbox, q.DLQ} {
			if mb != nil {
				_ = mb.Close()
			}
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, u := range urls {
			if _, err := client.DeleteQueue(dctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil {
				t.Logf("deleting queue %s: %v", u, err)
			}
		}
	}
	create := func(name string, attrs map[string]string) string {
		t.Helper()
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
		if err != nil {
			cleanup()
			t.Fatalf("CreateQueue %s: %v", name, err)
		}
		urls = append(urls, *out.QueueUrl)
		return *out.QueueUrl
	}
	mailbox := func(url string) *sqsmailbox.Mailbox {
		t.Helper()
		mb, err := sqsmailbox.New(client, url)
		if err != nil {
			cleanup()
			t.Fatalf("sqsmailbox.New(%s): %v", url, err)
		}
		return mb
	}

	vis := opts.VisibilityTimeout
	if vis == 0 {
		vis = 30 * time.Second
	}
	attrs := map[string]string{
		string(types.QueueAttributeNameVisibilityTimeout): seconds(vis),
		string(types.QueueAttributeNameDelaySeconds):      seconds(opts.Delay),
	}
	if opts.FIFO {
		attrs[string(types.QueueAttributeNameFifoQueue)] = "true"
		attrs[string(types.QueueAttributeNameContentBasedDeduplication)] = strconv.FormatBool(opts.ContentBasedDeduplication)
	}
	if opts.MaxReceiveCount > 0 {
		dlqAttrs := map[string]string{}
		if opts.FIFO {
			dlqAttrs[string(types.QueueAttributeNameFifoQueue)] = "true"
		}
		dlqURL := create(queueName(t, "-dlq", opts.FIFO), dlqAttrs)
		out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl:       aws.String(dlqURL),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
		})
		arn := ""
		if err == nil {
			arn = out.Attributes[string(types.QueueAttributeNameQueueArn)]
		}
		if arn == "" {
			cleanup()
			t.Fatalf("reading the DLQ's QueueArn: %v", errors.Join(err, errors.New("no QueueArn in the answer")))
		}
		policy, _ := json.Marshal(map[string]string{"deadLetterTargetArn": arn, "maxReceiveCount": strconv.Itoa(opts.MaxReceiveCount)})
		attrs[string(types.QueueAttributeNameRedrivePolicy)] = string(policy)
		q.DLQ, q.DeadLetterQueue = mailbox(dlqURL), arn
	}
	q.Mailbox = mailbox(create(queueName(t, "", opts.FIFO), attrs))
	return q, cleanup
}

// seconds renders d as whole seconds, rounded up, as SQS attributes want.
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}
