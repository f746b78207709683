package sqsmailbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// TestSqsmailboxConformance runs the conformance suite on sqsmailbox against
// the SQS-compatible server at SQS_ENDPOINT, on the wall clock (about as
// long as the longest scenario, some 5 s). SQS_SERVER says which server that
// is, so its declared differences apply. Without SQS_ENDPOINT the test
// skips, saying how to get a server, except under CI=true, where it fails.
func TestSqsmailboxConformance(t *testing.T) {
	h := newHarness(t)
	start := time.Now()
	t.Cleanup(func() { t.Logf("%s: conformance suite took %v", h.Name(), time.Since(start).Round(time.Millisecond)) })
	mailboxtest.Run(t, h)
}

// Kinds of server SQS_SERVER names, for the differences each declares.
// Unset means a server that behaves like Amazon SQS.
const (
	serverFauxqs     = "fauxqs"
	serverLocalStack = "localstack"
	serverElasticMQ  = "elasticmq"
	serverAWS        = "aws"
)

// harness runs the conformance suite on sqsmailbox against a real
// SQS-compatible server, each scenario on queues of its own (created with
// CreateQueue, deleted at cleanup). Build it with newHarness. Safe for
// concurrent use.
type harness struct {
	endpoint string
	kind     string // one of the server constants, or "" (like Amazon SQS)
	client   *sqs.Client
}

// newHarness returns a harness on the server the environment names:
// SQS_ENDPOINT (its base URL), SQS_SERVER (fauxqs, localstack, elasticmq,
// aws, or unset), AWS_REGION (or AWS_DEFAULT_REGION; us-east-1 when
// neither is set), and the environment's credentials, or static dummy ones
// for an emulator when the environment has none. Its client is built with
// sqsmailbox.NewClient, so AWS_CA_BUNDLE applies; the connections it dials
// are closed when t ends, leaving no goroutine behind for goleak to report.
//
// It skips t when SQS_ENDPOINT is unset (fails it under CI=true), and
// fails t when SQS_SERVER is not a known kind or the server does not answer.
func newHarness(t *testing.T) *harness {
	t.Helper()
	endpoint := os.Getenv("SQS_ENDPOINT")
	if endpoint == "" {
		const how = "SQS_ENDPOINT is unset, so sqsmailbox's conformance suite has no SQS-compatible server to run on.\n" +
			"*** ./scripts/test.sh starts one (fauxqs, installed by `npm ci --prefix integration`) and runs every test on it;\n" +
			"*** or start one with `cd integration && go run ./cmd/sqsserver` and export the SQS_ENDPOINT and SQS_SERVER lines it prints\n" +
			"*** (LocalStack: SQS_ENDPOINT=http://127.0.0.1:4566 SQS_SERVER=localstack)."
		if os.Getenv("CI") == "true" {
			t.Fatal(how + " CI=true: a skipped suite would hide that nothing was tested.")
		}
		t.Skip("\n*** SKIPPING: " + how + " (CI=true makes this a failure.)")
	}
	kind := os.Getenv("SQS_SERVER")
	switch kind {
	case "", serverFauxqs, serverLocalStack, serverElasticMQ, serverAWS:
	default:
		t.Fatalf("SQS_SERVER=%q: want fauxqs, localstack, elasticmq or aws (or unset: a server like Amazon SQS)", kind)
	}
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = "us-east-1"
	}

	opts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	if kind != serverAWS && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		// An emulator takes any credentials; the environment has none.
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	}
	ctx := t.Context()
	client, err := sqsmailbox.NewClient(ctx, endpoint, opts...)
	if err != nil {
		t.Fatalf("SQS_ENDPOINT=%s: %v", endpoint, err)
	}
	conns := &connTracker{conns: map[*trackedConn]struct{}{}}
	client = sqs.New(client.Options(), conns.track)
	t.Cleanup(conns.closeAll)
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := client.ListQueues(callCtx, &sqs.ListQueuesInput{MaxResults: aws.Int32(1)}); err != nil {
		t.Fatalf("SQS_ENDPOINT=%s does not answer ListQueues: %v", endpoint, err)
	}
	return &harness{endpoint: endpoint, kind: kind, client: client}
}

// Name returns "sqsmailbox/" and the server's kind, e.g. "sqsmailbox/fauxqs"
// ("sqsmailbox/endpoint" when SQS_SERVER is unset).
func (h *harness) Name() string {
	if h.kind == "" {
		return "sqsmailbox/endpoint"
	}
	return "sqsmailbox/" + h.kind
}

// Features declares what the server is known to do, by its kind. Amazon SQS
// (and any other server, taken to be like it) supports everything and
// enforces the 12-hour lease ceiling; fauxqs 2.4.1 does not enforce the
// ceiling, returns at most one message per FIFO group per receive, and
// returns every message attribute to a receive that asked for none.
func (h *harness) Features() mailboxtest.Features {
	f := mailboxtest.Features{
		FIFO:                   true,
		DLQ:                    true,
		AttributesReader:       true,
		LeaseCeiling:           true,
		FIFOBatchesWithinGroup: true,
		RedriveKeepsMessageID:  true,
		OmitsUnaskedAttributes: true,
	}
	if h.kind == serverFauxqs {
		f.LeaseCeiling = false
		f.FIFOBatchesWithinGroup = false
		f.OmitsUnaskedAttributes = false
	}
	return f
}

// Run calls body directly: a real server runs on the wall clock.
func (h *harness) Run(t *testing.T, body func(t *testing.T)) { body(t) }

// Sleep waits d on the wall clock, or until ctx is done.
func (h *harness) Sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NewQueue creates a queue configured by opts (and, when
// opts.MaxReceiveCount > 0, a dead-letter queue and a redrive policy to it)
// and returns sqsmailbox mailboxes for them. It fails t on any error.
// cleanup closes the mailboxes and deletes the queues, with a context of its
// own (it may run after ctx is done).
func (h *harness) NewQueue(ctx context.Context, t testing.TB, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
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
			if _, err := h.client.DeleteQueue(dctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil {
				t.Logf("deleting queue %s: %v", u, err)
			}
		}
	}
	create := func(name string, attrs map[string]string) string {
		t.Helper()
		out, err := h.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
		if err != nil {
			cleanup()
			t.Fatalf("CreateQueue %s: %v", name, err)
		}
		urls = append(urls, *out.QueueUrl)
		return *out.QueueUrl
	}
	mailbox := func(url string) *sqsmailbox.Mailbox {
		t.Helper()
		mb, err := sqsmailbox.New(h.client, url)
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
		out, err := h.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
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

// seconds renders d as whole seconds, rounded up, as SQS attributes want.
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// connTracker records the connections an SQS client dials, so that a test
// can close them at its end: their goroutines (net/http's persistConn read
// and write loops) would otherwise outlive it. The SDK's HTTP client
// (awshttp.BuildableClient) clones its transport on every change and at
// first use, and offers no CloseIdleConnections, so the transport it sends
// on cannot be reached from outside; its dial function is copied along, and
// can. Safe for concurrent use.
type connTracker struct {
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

// track is an sqs.Options function: on the client's resolved
// BuildableClient, it wraps the dial function of the transport so every new
// connection is recorded until it is closed. The SDK's own dialer, timeouts,
// CA bundle and redirect policy stay as they are.
func (ct *connTracker) track(o *sqs.Options) {
	bc, ok := o.HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		return
	}
	o.HTTPClient = bc.WithTransportOptions(func(tr *http.Transport) {
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tc := &trackedConn{Conn: c, ct: ct}
			ct.mu.Lock()
			ct.conns[tc] = struct{}{}
			ct.mu.Unlock()
			return tc, nil
		}
	})
}

// closeAll closes every connection still open.
func (ct *connTracker) closeAll() {
	ct.mu.Lock()
	open := make([]*trackedConn, 0, len(ct.conns))
	for c := range ct.conns {
		open = append(open, c)
	}
	ct.mu.Unlock()
	for _, c := range open {
		_ = c.Close()
	}
}

// trackedConn is a connection a connTracker recorded; Close forgets it.
type trackedConn struct {
	net.Conn
	ct *connTracker
}

func (c *trackedConn) Close() error {
	c.ct.mu.Lock()
	delete(c.ct.conns, c)
	c.ct.mu.Unlock()
	return c.Conn.Close()
}
