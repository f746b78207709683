package sqsloop_test

import (
	"maps"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// ParseSystemAttributes: each attribute becomes its field; an absent or
// malformed one (not a number, a fraction, out of range) zeroes its field,
// whatever it held, keeps the raw value in Attributes and leaves the rest.
func TestParseSystemAttributes(t *testing.T) {
	sent, first := time.UnixMilli(1700000000000), time.UnixMilli(1700000000123)
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		want  sqsloop.Message // its typed fields
	}{
		{"all", map[string]string{
			sqsloop.AttrApproximateReceiveCount:          "3",
			sqsloop.AttrSentTimestamp:                    "1700000000000",
			sqsloop.AttrApproximateFirstReceiveTimestamp: "1700000000123",
			sqsloop.AttrMessageGroupID:                   "g-1",
			sqsloop.AttrSequenceNumber:                   "18849496460467696128",
		}, sqsloop.Message{ReceiveCount: 3, SentAt: sent, FirstReceivedAt: first, MessageGroupID: "g-1"}},
		{"none", nil, sqsloop.Message{}},
		{"malformed", map[string]string{
			sqsloop.AttrApproximateReceiveCount:          "many",
			sqsloop.AttrSentTimestamp:                    "yesterday",
			sqsloop.AttrApproximateFirstReceiveTimestamp: "1700000000123.5",
			sqsloop.AttrMessageGroupID:                   "",
		}, sqsloop.Message{}},
		{"out of range", map[string]string{
			sqsloop.AttrApproximateReceiveCount:          "99999999999999999999",
			sqsloop.AttrSentTimestamp:                    "99999999999999999999",
			sqsloop.AttrApproximateFirstReceiveTimestamp: "1700000000123",
		}, sqsloop.Message{FirstReceivedAt: first}},
		{"only some", map[string]string{sqsloop.AttrApproximateReceiveCount: "1"}, sqsloop.Message{ReceiveCount: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &sqsloop.Message{
				ID: "m-1", Attributes: maps.Clone(tc.attrs),
				ReceiveCount: 7, SentAt: time.Unix(1, 0), FirstReceivedAt: time.Unix(2, 0), MessageGroupID: "stale",
			}
			m.ParseSystemAttributes()
			if m.ReceiveCount != tc.want.ReceiveCount || !m.SentAt.Equal(tc.want.SentAt) ||
				!m.FirstReceivedAt.Equal(tc.want.FirstReceivedAt) || m.MessageGroupID != tc.want.MessageGroupID {
				t.Errorf("ReceiveCount %d, SentAt %v, FirstReceivedAt %v, MessageGroupID %q; want %d, %v, %v, %q",
					m.ReceiveCount, m.SentAt, m.FirstReceivedAt, m.MessageGroupID,
					tc.want.ReceiveCount, tc.want.SentAt, tc.want.FirstReceivedAt, tc.want.MessageGroupID)
			}
			if !maps.Equal(m.Attributes, tc.attrs) || m.ID != "m-1" {
				t.Errorf("ID %q, Attributes %v: want m-1 and the raw attributes unchanged, %v", m.ID, m.Attributes, tc.attrs)
			}
		})
	}
}
