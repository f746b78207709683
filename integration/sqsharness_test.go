package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// sqsHarness gives the end-to-end tests sqsmailbox queues on the SQS server
// the tests share (see sqsServerHarness), in real time, each test on queues
// of its own (created with CreateQueue, deleted at cleanup). It is the
// harness of sqsmailbox's own conformance test
// (sqsmailbox/conformance_test.go), made again here on StartSQSServer's
// server. Safe for concurrent use.
type sqsHarness struct {
	server *SQSServer
	client *sqs.Client
}

// newSQSHarness returns a harness on server, whose client is the server's
// (SQSServer.NewClient: AWS_CA_BUNDLE and the rest of the SDK's
// configuration apply, and Close closes its connections). Errors are
// NewClient's.
func newSQSHarness(ctx context.Context, server *SQSServer) (*sqsHarness, error) {
	client, err := server.NewClient(ctx)
	if err != nil {
		return nil, err
	}
	return &sqsHarness{server: server, client: client}, nil
}

// Name returns "sqsmailbox/" and the server's kind, e.g. "sqsmailbox/fauxqs".
func (h *sqsHarness) Name() string { return "sqsmailbox/" + h.server.Kind }

// Features declares what the server is known to do, by its kind (so a
// fauxqs reached through SQS_ENDPOINT needs SQS_SERVER=fauxqs). Amazon SQS
// (and any other server, taken to be like it) supports everything and
// enforces the 12-hour lease ceiling; fauxqs 2.4.1 does not enforce the
// ceiling, returns at most one message per FIFO group per receive, and
// returns every message attribute to a receive that asked for none.
func (h *sqsHarness) Features() mailboxtest.Features {
	f := mailboxtest.Features{
		FIFO:                   true,
		DLQ:                    true,
		AttributesReader:       true,
		LeaseCeiling:           true,
		FIFOBatchesWithinGroup: true,
		RedriveKeepsMessageID:  true,
		OmitsUnaskedAttributes: true,
	}
	if h.server.Kind == KindFauxqs {
		f.LeaseCeiling = false
		f.FIFOBatchesWithinGroup = false
		f.OmitsUnaskedAttributes = false
	}
	return f
}

// Run calls body directly: a real server runs on the wall clock.
func (h *sqsHarness) Run(t *testing.T, body func(t *testing.T)) { body(t) }

// Sleep waits d on the wall clock, or until ctx is done.
func (h *sqsHarness) Sleep(ctx context.Context, d time.Duration) error { return sleepCtx(ctx, d) }

// NewQueue creates the queue (and its DLQ) on the server with attributes from
// opts, and returns sqsmailbox mailboxes for them. cleanup closes the
// mailboxes and deletes the queues.
func (h *sqsHarness) NewQueue(ctx context.Context, t testing.TB, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
	t.Helper()
	return newSQSQueue(ctx, t, h.client, opts)
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

// newSQSQueue creates a queue configured by opts through client (and its DLQ
// when opts.MaxReceiveCount > 0), and returns sqsmailbox mailboxes for them.
// It fails t on any error. cleanup closes the mailboxes and deletes the
// queues, with a context of its own (it may run after ctx is done).
func newSQSQueue(ctx context.Context, t testing.TB, client *sqs.Client, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
	t.Helper()
	var urls []string
	var q mailboxtest.Queue
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

// The SQS server and its harness are made once, by the first test that needs
// them, and the server is stopped by TestMain after every test has run.
var sqsEnv struct {
	once    sync.Once
	server  *SQSServer
	harness *sqsHarness
	err     error
}

// sqsServerHarness returns the shared harness on the shared SQS-compatible server,
// starting the server on first use (see StartSQSServer for the order tried).
// When no server can be had it skips t with a loud message, or fails t under
// CI=true, where a skipped suite would hide that nothing was tested.
func sqsServerHarness(t *testing.T) *sqsHarness {
	t.Helper()
	sqsEnv.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*DefaultStartTimeout)
		defer cancel()
		start := time.Now()
		sqsEnv.server, sqsEnv.err = StartSQSServer(ctx, ServerOptions{Logf: t.Logf})
		if sqsEnv.err != nil {
			return
		}
		t.Logf("integration: %s server at %s, started in %v", sqsEnv.server.Kind, sqsEnv.server.Endpoint, time.Since(start).Round(time.Millisecond))
		sqsEnv.harness, sqsEnv.err = newSQSHarness(ctx, sqsEnv.server)
	})
	switch err := sqsEnv.err; {
	case err == nil:
		return sqsEnv.harness
	case errors.Is(err, ErrNoServer) && os.Getenv("CI") != "true":
		t.Skipf("\n*** SKIPPING: no SQS-compatible server, so sqsmailbox is not tested on one: %v\n"+
			"*** Set SQS_ENDPOINT, start Docker, or run `npm ci --prefix integration` (CI=true makes this a failure).", err)
	default:
		t.Fatalf("no SQS-compatible server: %v", err)
	}
	return nil
}

// stopSQSServer stops the shared server if a test started it.
func stopSQSServer() error {
	if sqsEnv.server == nil {
		return nil
	}
	return sqsEnv.server.Close()
}
