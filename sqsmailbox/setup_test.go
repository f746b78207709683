package sqsmailbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// CreateQueue on the server: the queue, its dead-letter queue and the
// redrive policy in one call; again with the same spec it reuses them; with
// another it names what differs; OpenDeadLetterQueue reaches the DLQ.
func TestCreateQueueOnServer(t *testing.T) {
	client := newHarness(t).Client()
	ctx := t.Context()
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := "sqsloop-setup-" + hex.EncodeToString(r[:]) + ".fifo"
	spec := sqsloop.QueueSpec{Name: name, FIFO: true, ContentBasedDeduplication: true, VisibilityTimeout: 2 * time.Second, MaxReceiveCount: 4}
	mb, err := sqsmailbox.CreateQueue(ctx, client, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	dlqMB, err := mb.OpenDeadLetterQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dlq := dlqMB.(*sqsmailbox.Mailbox)
	defer dlq.Close()
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, u := range []string{mb.QueueURL(), dlq.QueueURL()} {
			_, _ = client.DeleteQueue(dctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	})
	if !strings.HasSuffix(dlq.QueueURL(), spec.DeadLetterQueueName()) {
		t.Errorf("DLQ URL %s, want the queue %s", dlq.QueueURL(), spec.DeadLetterQueueName())
	}
	attrs, err := mb.QueueAttributes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Match(attrs); err != nil || attrs.MaxReceiveCount != 4 || !attrs.FIFO {
		t.Errorf("QueueAttributes = %+v (%v), want the spec's", attrs, err)
	}
	dattrs, err := dlq.QueueAttributes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.DeadLetterSpec().Match(dattrs); err != nil {
		t.Errorf("DLQ's QueueAttributes: %v", err)
	}
	_, err = dlq.OpenDeadLetterQueue(ctx)
	if !errors.Is(err, sqsloop.ErrNoDeadLetterQueue) || !strings.Contains(err.Error(), dlq.QueueURL()) {
		t.Errorf("OpenDeadLetterQueue of the DLQ = %v, want ErrNoDeadLetterQueue naming it", err)
	}

	again, err := sqsmailbox.CreateQueue(ctx, client, spec)
	if err != nil {
		t.Fatalf("CreateQueue with the same spec again: %v", err)
	}
	if again.QueueURL() != mb.QueueURL() {
		t.Errorf("CreateQueue again gave %s, want %s", again.QueueURL(), mb.QueueURL())
	}
	other := spec
	other.VisibilityTimeout = time.Minute
	_, err = sqsmailbox.CreateQueue(ctx, client, other)
	if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "VisibilityTimeout is 2s, the spec asks for 1m0s") {
		t.Errorf("CreateQueue with another visibility timeout = %v, want ErrInvalidArgument naming the difference", err)
	}
	_, err = sqsmailbox.CreateQueue(ctx, client, sqsloop.QueueSpec{Name: "no spaces allowed"})
	if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "QueueSpec.Name") {
		t.Errorf("CreateQueue with a bad name = %v, want QueueSpec.Validate's error", err)
	}
}
