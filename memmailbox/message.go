package memmailbox

import (
	"time"

	"github.com/sqsloop/sqsloop"
)

// fill writes the received form of r into m: copies of everything, so that
// the caller cannot reach the queue's state; of the message attributes,
// those names selects (sqsloop.ReceiveRequest.MessageAttributeNames); the
// system attributes SQS reports (sqsloop.Message.SetSystemAttributes; the
// FIFO ones on a FIFO queue only, whose records alone have a sequence
// number). s.mu is held.
func (s *queueState) fill(m *sqsloop.Message, r *record, vt time.Duration, names []string) {
	*m = sqsloop.Message{
		ID:                r.id,
		Body:              r.body,
		MessageAttributes: copyAttrs(r.attrs, names),
		ReceiveCount:      r.count,
		SentAt:            r.sentAt,
		FirstReceivedAt:   r.firstRcv,
		MessageGroupID:    r.group,
		ReceiptHandle:     r.handle,
		ReceivedAt:        r.receivedAt,
		VisibilityTimeout: vt,
	}
	m.SetSystemAttributes(r.dedupID, r.seq)
}

// copyAttrs returns a deep copy (BinaryValue included) of the attributes of
// attrs that names selects — nil names all of them, an empty slice none, a
// name ending in ".*" a prefix, as SQS's MessageAttributeNames — or nil for
// none.
func copyAttrs(attrs map[string]sqsloop.MessageAttribute, names []string) map[string]sqsloop.MessageAttribute {
	if len(attrs) == 0 || (names != nil && len(names) == 0) {
		return nil
	}
	want := sqsloop.ReceiveRequest{MessageAttributeNames: names}
	var out map[string]sqsloop.MessageAttribute
	for k, v := range attrs {
		if !want.WantsMessageAttribute(k) {
			continue
		}
		if out == nil {
			out = make(map[string]sqsloop.MessageAttribute, len(attrs))
		}
		if v.BinaryValue != nil {
			v.BinaryValue = append([]byte(nil), v.BinaryValue...)
		}
		out[k] = v
	}
	return out
}
