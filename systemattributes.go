package sqsloop

import (
	"strconv"
	"time"
)

// ParseSystemAttributes sets m's typed fields from its raw system
// attributes, m.Attributes, written as SQS writes them; it is for a Mailbox,
// or an adapter such as sqslambda, that receives them as text:
//
//   - ReceiveCount from ApproximateReceiveCount, a decimal integer
//     (strconv.Atoi);
//   - SentAt from SentTimestamp and FirstReceivedAt from
//     ApproximateFirstReceiveTimestamp, decimal milliseconds since the Unix
//     epoch (strconv.ParseInt, 64 bits; time.UnixMilli, local time);
//   - MessageGroupID from MessageGroupId, as it is.
//
// An absent or malformed attribute (not a decimal integer, or one out of
// range) sets its field to the zero value, whatever the field held before;
// m.Attributes is not changed, so the raw value stays there. It returns no
// error: a malformed system attribute never costs the message. It reads
// m.Attributes (nil is fine) and writes only those four fields; like every
// write of a Message, it is not safe for concurrent use on the same m.
func (m *Message) ParseSystemAttributes() {
	attrs := m.Attributes
	n, err := strconv.Atoi(attrs[AttrApproximateReceiveCount])
	if err != nil {
		n = 0 // Atoi gives the nearest int for one out of range
	}
	m.ReceiveCount = n
	m.SentAt = unixMillis(attrs[AttrSentTimestamp])
	m.FirstReceivedAt = unixMillis(attrs[AttrApproximateFirstReceiveTimestamp])
	m.MessageGroupID = attrs[AttrMessageGroupID]
}

// unixMillis parses an SQS timestamp attribute (decimal milliseconds since
// the Unix epoch); the zero time when absent or malformed.
func unixMillis(s string) time.Time {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
