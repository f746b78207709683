package sqsmailbox_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// SQS has no priorities: a spec asking for them is refused before any
// call (the client, nil here, is never used).
func TestCreateQueueRefusesPriority(t *testing.T) {
	_, err := sqsmailbox.CreateQueue(t.Context(), nil, sqsloop.QueueSpec{Name: "ranked", Priority: true})
	if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "QueueSpec.Priority: must be false on sqsmailbox") {
		t.Errorf("CreateQueue with Priority = %v, want ErrInvalidArgument naming QueueSpec.Priority", err)
	}
}
