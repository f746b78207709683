package memmailbox

import (
	"time"

	"github.com/sqsloop/sqsloop"
)

// prepare applies the rules of a queue configured as cfg to msgs[i] of a
// Send, which passed sqsloop.ValidateSend (the rules of every queue):
// cfg.AcceptMessage's (its MaxMessageSize, FIFO's rules, the queue's
// delay). It returns the record to enqueue (without ID or times) and its
// delay, rounded up to whole seconds as SQS counts DelaySeconds, or
// AcceptMessage's error.
func prepare(i int, m sqsloop.OutgoingMessage, cfg sqsloop.QueueSpec) (*record, time.Duration, error) {
	delay, dedupID, err := cfg.AcceptMessage(i, m)
	if err != nil {
		return nil, 0, err
	}
	// SQS takes a MessageGroupId on a standard queue too (fair queues);
	// there it orders nothing, and the received message reports it.
	return &record{body: m.Body, attrs: copyAttrs(m.MessageAttributes, nil), group: m.MessageGroupID, dedupID: dedupID}, delay, nil
}
