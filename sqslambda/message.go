package sqslambda

import (
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
)

// systemAttributes are the system attributes a Message carries: the
// sqsloop.Attr… ones, as sqsmailbox asks SQS for them. Others of the event
// (SenderId, DeadLetterQueueSourceArn) are left out, so that a handler
// sees the same Message on Lambda as under a consumer.
var systemAttributes = []string{
	sqsloop.AttrApproximateReceiveCount,
	sqsloop.AttrApproximateFirstReceiveTimestamp,
	sqsloop.AttrSentTimestamp,
	sqsloop.AttrMessageGroupID,
	sqsloop.AttrMessageDeduplicationID,
	sqsloop.AttrSequenceNumber,
	sqsloop.AttrAWSTraceHeader,
}

// message returns the Message of record r, delivered to an invocation that
// started at start from a queue whose visibility timeout is vt (0 when
// unknown: no client). The fields are those sqsmailbox fills, the typed
// ones by sqsloop.Message.ParseSystemAttributes.
//
// ReceivedAt is start, or, on a first delivery, the record's
// ApproximateFirstReceiveTimestamp when it is earlier: that is when this
// receive happened. A redelivered record's event does not say when the
// event source mapping received it, which a batching window or a
// throttled invocation puts earlier than start: one reason for AWS's
// advice of a visibility timeout of 6× the function timeout.
func message(r *events.SQSMessage, start time.Time, vt time.Duration) *sqsloop.Message {
	m := &sqsloop.Message{
		ID:                r.MessageId,
		Body:              r.Body,
		Attributes:        make(map[string]string, len(systemAttributes)),
		ReceiptHandle:     r.ReceiptHandle,
		ReceivedAt:        start,
		VisibilityTimeout: vt,
	}
	for _, name := range systemAttributes {
		if v, ok := r.Attributes[name]; ok {
			m.Attributes[name] = v
		}
	}
	if len(r.MessageAttributes) > 0 {
		m.MessageAttributes = make(map[string]sqsloop.MessageAttribute, len(r.MessageAttributes))
		for name, a := range r.MessageAttributes {
			ma := sqsloop.MessageAttribute{DataType: a.DataType, BinaryValue: a.BinaryValue}
			if a.StringValue != nil {
				ma.StringValue = *a.StringValue
			}
			m.MessageAttributes[name] = ma
		}
	}
	m.ParseSystemAttributes()
	if m.ReceiveCount == 1 && !m.FirstReceivedAt.IsZero() && m.FirstReceivedAt.Before(start) {
		m.ReceivedAt = m.FirstReceivedAt
	}
	return m
}
