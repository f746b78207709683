package harness

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// SQS runs mailboxtest scenarios, and the end-to-end tests, on sqsmailbox
// against a real SQS-compatible server, on the wall clock, each test on
// queues of its own (created with CreateQueue, deleted at cleanup). Build it
// with NewSQS. Safe for concurrent use.
type SQS struct {
	kind   string
	client *sqs.Client
}

var _ mailboxtest.Harness = (*SQS)(nil)

// NewSQS returns a harness that creates its queues through client, on a
// server of the given kind: one of the kind constants (Fauxqs, …), or any
// other value, "" included, for a server taken to behave like Amazon SQS.
// The caller keeps client's connections and closes them (ConnTracker).
func NewSQS(kind string, client *sqs.Client) *SQS {
	return &SQS{kind: kind, client: client}
}

// Name returns "sqsmailbox/" and the server's kind, e.g. "sqsmailbox/fauxqs"
// ("sqsmailbox/endpoint" when the kind is "").
func (h *SQS) Name() string { return "sqsmailbox/" + cmp.Or(h.kind, "endpoint") }

// Features declares what the server is known to do, by its kind. Amazon SQS
// (and any other server, taken to be like it) supports everything and
// enforces the 12-hour lease ceiling; fauxqs 2.4.1 does not enforce the
// ceiling, returns at most one message per FIFO group per receive,
// returns every message attribute to a receive that asked for none,
// answers success to a FIFO delete whose message is gone, and drops the
// MessageGroupID of a standard queue's message.
func (h *SQS) Features() mailboxtest.Features {
	f := sqsFeatures()
	if h.kind == Fauxqs {
		f.LeaseCeiling = false
		f.FIFOBatchesWithinGroup = false
		f.OmitsUnaskedAttributes = false
		f.FIFODeleteExpires = false
		f.StandardGroupID = false
	}
	return f
}

// Run calls body directly: a real server runs on the wall clock.
func (h *SQS) Run(t *testing.T, body func(t *testing.T)) { body(t) }

// Sleep waits d on the wall clock, or until ctx is done (returning ctx's
// error).
func (h *SQS) Sleep(ctx context.Context, d time.Duration) error { return sleep(ctx, d) }

// NewQueue sets up a queue configured by opts (and, when
// opts.MaxReceiveCount > 0, a dead-letter queue and a redrive policy to it)
// with sqsmailbox.CreateQueue, under a name unique to the test, and returns
// sqsmailbox mailboxes for them. It fails t on any error. cleanup closes the
// mailboxes and deletes the queues, with a context of its own (it may run
// after ctx is done).
func (h *SQS) NewQueue(ctx context.Context, t testing.TB, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
	t.Helper()
	spec := Spec(queueName(t, opts.FIFO), opts)
	var q mailboxtest.Queue
	var urls []string
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
	mb, err := sqsmailbox.CreateQueue(ctx, h.client, spec)
	if err != nil {
		t.Fatalf("sqsmailbox.CreateQueue(%+v): %v", spec, err)
	}
	q.Mailbox = mb
	urls = append(urls, mb.QueueURL())
	if opts.MaxReceiveCount > 0 {
		dlq, err := mb.OpenDeadLetterQueue(ctx)
		if err != nil {
			cleanup()
			t.Fatalf("OpenDeadLetterQueue: %v", err)
		}
		attrs, err := mb.QueueAttributes(ctx)
		if err != nil {
			cleanup()
			t.Fatalf("QueueAttributes: %v", err)
		}
		q.DLQ, q.DeadLetterQueue = dlq, attrs.DeadLetterQueue
		urls = append(urls, dlq.(*sqsmailbox.Mailbox).QueueURL())
	}
	return q, cleanup
}

// Client returns the SQS client the harness creates its queues with.
func (h *SQS) Client() *sqs.Client { return h.client }

var unsafeQueueChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// queueName makes a queue name unique to this run from the test's name:
// letters, digits, '-' and '_', at most 80 characters with the ".fifo"
// suffix (SQS's rules), room left for the dead-letter queue's "-dlq"
// (sqsloop.DeadLetterSuffix). SQS refuses to reuse a deleted queue's name
// for 60 s, hence the random part.
func queueName(t testing.TB, fifo bool) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	base := unsafeQueueChars.ReplaceAllString(t.Name(), "-")
	tail := "-" + hex.EncodeToString(r[:])
	if fifo {
		tail += sqsloop.FIFOSuffix
	}
	if room := sqsloop.MaxQueueNameLength - len(sqsloop.DeadLetterSuffix) - len("sqsloop-") - len(tail); len(base) > room {
		base = base[len(base)-room:]
	}
	return "sqsloop-" + base + tail
}
