package memmailbox_test

import (
	"errors"
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// memmailbox has no priorities, as SQS has none: a spec asking for them
// is refused, not served in another order.
func TestCreateQueueRefusesPriority(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "ranked", Priority: true})
	if q != nil {
		t.Errorf("CreateQueue with Priority returned a queue")
	}
	wantErr(t, err, sqsloop.ErrInvalidArgument, "QueueSpec.Priority: must be false on memmailbox")
	if _, err := b.Queue("ranked").QueueAttributes(t.Context()); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("QueueAttributes of the refused queue = %v, want ErrQueueNotFound: nothing created", err)
	}
}
