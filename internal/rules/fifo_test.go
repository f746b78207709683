package rules

import (
	"testing"

	"github.com/sqsloop/sqsloop"
)

// A message is a FIFO group's when it has both a message group ID and a
// SequenceNumber: a fair queue's group ID alone orders nothing, and a
// SequenceNumber without a group names no group to keep in order.
func TestFIFO(t *testing.T) {
	seq := map[string]string{sqsloop.AttrSequenceNumber: "18"}
	for _, c := range []struct {
		name string
		m    sqsloop.Message
		want bool
	}{
		{"FIFO", sqsloop.Message{MessageGroupID: "g", Attributes: seq}, true},
		{"fair queue (group, no sequence number)", sqsloop.Message{MessageGroupID: "g"}, false},
		{"sequence number, no group", sqsloop.Message{Attributes: seq}, false},
		{"standard", sqsloop.Message{}, false},
	} {
		if got := FIFO(&c.m); got != c.want {
			t.Errorf("%s: FIFO %v, want %v", c.name, got, c.want)
		}
	}
}
