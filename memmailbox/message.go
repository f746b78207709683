package memmailbox

import (
	"strconv"
	"time"

	"github.com/sqsloop/sqsloop"
)

// fill writes the received form of r into m: copies of everything, so that
// the caller cannot reach the queue's state; of the message attributes,
// those names selects (sqsloop.ReceiveRequest.MessageAttributeNames). s.mu
// is held.
func (s *queueState) fill(m *sqsloop.Message, r *record, vt time.Duration, names []string) {
	n := 3
	switch {
	case s.cfg.FIFO:
		n = 6
	case r.group != "":
		n = 4
	}
	attrs := make(map[string]string, n)
	attrs[sqsloop.AttrApproximateReceiveCount] = strconv.Itoa(r.count)
	attrs[sqsloop.AttrSentTimestamp] = r.sentTS
	attrs[sqsloop.AttrApproximateFirstReceiveTimestamp] = r.firstTS
	if r.group != "" { // always on FIFO; on a standard queue if sent with one
		attrs[sqsloop.AttrMessageGroupID] = r.group
	}
	if s.cfg.FIFO { // SQS reports these for FIFO queues only
		attrs[sqsloop.AttrMessageDeduplicationID] = r.dedupID
		attrs[sqsloop.AttrSequenceNumber] = r.seq
	}
	*m = sqsloop.Message{
		ID:                r.id,
		Body:              r.body,
		MessageAttributes: copyAttrs(r.attrs, names),
		Attributes:        attrs,
		ReceiveCount:      r.count,
		SentAt:            r.sentAt,
		FirstReceivedAt:   r.firstRcv,
		MessageGroupID:    r.group,
		ReceiptHandle:     r.handle,
		ReceivedAt:        r.receivedAt,
		VisibilityTimeout: vt,
	}
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
