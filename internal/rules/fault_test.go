package rules

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sqsloop/sqsloop"
)

// Every sentinel has one fault, however it is wrapped; an error matching
// several takes the first of the table (the handle's, then the queue's);
// anything else is transient.
func TestFaultOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Fault
	}{
		{fmt.Errorf("delete: %w", sqsloop.ErrReceiptHandleExpired), HandleGone},
		{sqsloop.ErrLeaseCeiling, HandleGone},
		{errors.Join(sqsloop.ErrLeaseCeiling, sqsloop.ErrInvalidArgument), HandleGone},
		{fmt.Errorf("queue q: %w", sqsloop.ErrQueueNotFound), QueueGone},
		{sqsloop.ErrMailboxClosed, QueueGone},
		{errors.Join(sqsloop.ErrAccessDenied, sqsloop.ErrQueueNotFound), QueueGone},
		{fmt.Errorf("send: %w", sqsloop.ErrAccessDenied), Denied},
		{fmt.Errorf("entry 3: %w", sqsloop.ErrInvalidArgument), Invalid},
		{errors.New("throttled"), Transient},
		{context.DeadlineExceeded, Transient},
		{nil, Transient},
	} {
		if got := FaultOf(c.err); got != c.want {
			t.Errorf("FaultOf(%v) = %d, want %d", c.err, got, c.want)
		}
		if got := Permanent(c.err); got != (c.want != Transient) {
			t.Errorf("Permanent(%v) = %v", c.err, got)
		}
	}
}
