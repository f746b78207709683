package sqsloop_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
)

func TestMessagePriority(t *testing.T) {
	with := func(a sqsloop.MessageAttribute) sqsloop.OutgoingMessage {
		return sqsloop.OutgoingMessage{Body: "b", MessageAttributes: map[string]sqsloop.MessageAttribute{sqsloop.PriorityAttribute: a}}
	}
	ranked := sqsloop.QueueSpec{Name: "q", Priority: true}
	for _, tc := range []struct {
		spec sqsloop.QueueSpec
		msg  sqsloop.OutgoingMessage
		want int
		bad  string // a part of the error; "" for none
	}{
		{ranked, sqsloop.OutgoingMessage{Body: "no attribute"}, 0, ""},
		{ranked, with(sqsloop.PriorityValue(9)), 9, ""},
		{ranked, with(sqsloop.PriorityValue(-9)), -9, ""},
		{ranked, with(sqsloop.MessageAttribute{DataType: "Number.int", StringValue: "3"}), 3, ""},
		{ranked, with(sqsloop.PriorityValue(10)), 0, `must be a whole number from -9 to 9 (higher first) on a queue with priorities, got "10"`},
		{ranked, with(sqsloop.PriorityValue(-10)), 0, `got "-10"`},
		{ranked, with(sqsloop.MessageAttribute{DataType: "Number", StringValue: "1.5"}), 0, `got "1.5"`},
		{ranked, with(sqsloop.MessageAttribute{DataType: "String", StringValue: "1"}), 0, `must be of DataType Number on a queue with priorities, got "String"`},
		// Without priorities it is an attribute like any other.
		{sqsloop.QueueSpec{Name: "q"}, with(sqsloop.MessageAttribute{DataType: "String", StringValue: "urgent"}), 0, ""},
		{sqsloop.QueueSpec{Name: "q"}, with(sqsloop.PriorityValue(5)), 0, ""},
	} {
		got, err := tc.spec.MessagePriority(2, tc.msg)
		switch {
		case tc.bad == "" && (err != nil || got != tc.want):
			t.Errorf("%+v: MessagePriority = %d, %v; want %d", tc.msg.MessageAttributes, got, err, tc.want)
		case tc.bad != "" && (!errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.bad) ||
			!strings.Contains(err.Error(), `Send: msgs[2].MessageAttributes["sqsloop.priority"]`)):
			t.Errorf("%+v: MessagePriority error %v, want ErrInvalidArgument naming the attribute and saying %q", tc.msg.MessageAttributes, err, tc.bad)
		}
	}
}

func TestQueueSpecPriorityIsAnAttribute(t *testing.T) {
	spec := sqsloop.QueueSpec{Name: "q", Priority: true, MaxReceiveCount: 2}
	if !spec.DeadLetterSpec().Priority {
		t.Errorf("DeadLetterSpec() = %+v, want Priority kept", spec.DeadLetterSpec())
	}
	attrs := sqsloop.QueueAttributes{VisibilityTimeout: 30e9, RetentionPeriod: sqsloop.DefaultRetentionPeriod, MaxMessageSize: sqsloop.MaxMessageSize,
		MaxReceiveCount: 2, DeadLetterQueue: "q-dlq"}
	if err := spec.Match(attrs); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "Priority is false, the spec asks for true") {
		t.Errorf("Match(a queue without priorities) = %v, want ErrInvalidArgument naming Priority", err)
	}
	attrs.Priority = true
	if err := spec.Match(attrs); err != nil {
		t.Errorf("Match(the same queue) = %v, want nil", err)
	}
}
