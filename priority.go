package sqsloop

import (
	"strconv"
	"strings"
)

// Message priorities: a difference from SQS, which has none. A queue set up
// with QueueSpec.Priority delivers a message sent with a higher priority
// before those with lower ones; only sqlmailbox keeps such queues
// (memmailbox and sqsmailbox refuse the spec). A message says its priority
// in the message attribute PriorityAttribute (PriorityValue makes it); one
// without it has priority 0.
//
// Higher numbers come first, as in JMS and RabbitMQ and as the word reads
// ("priority 5 is higher than 1"); River and Oban count the other way
// (River: 1 is the highest, of 1–4). The default, 0, is the middle of the
// range, as JMS's 4 is of 0–9, so that a producer can move some messages
// ahead (1–9) or behind (-1 to -9) without touching those it sends today.
// The range is small on purpose: a few levels are what a queue can
// promise to honour, and what operators can reason about.
const (
	// PriorityAttribute is the message attribute that carries a message's
	// priority: DataType "Number" (or a "Number." custom type), a whole
	// number from MinPriority to MaxPriority.
	PriorityAttribute = "sqsloop.priority"

	// MinPriority and MaxPriority bound a priority: -9 to 9; 0 is the
	// default.
	MinPriority = -9
	MaxPriority = 9
)

// PriorityValue returns the message attribute that gives a message priority
// p (MinPriority–MaxPriority, higher first): put it in
// OutgoingMessage.MessageAttributes under PriorityAttribute. It does not
// check p; a queue with priorities refuses a value out of range (see
// QueueSpec.MessagePriority).
func PriorityValue(p int) MessageAttribute {
	return MessageAttribute{DataType: "Number", StringValue: strconv.Itoa(p)}
}

// MessagePriority returns the priority of msgs[i] of a Send to the queue s
// describes: 0 when s.Priority is false (the attribute is then an
// attribute like any other) or when m has no PriorityAttribute, else the
// attribute's value. On a queue with priorities, an attribute that is not a
// Number holding a whole number from MinPriority to MaxPriority is an error
// wrapping ErrInvalidArgument that names it and the range; a Mailbox
// returns it as the entry's error.
func (s QueueSpec) MessagePriority(i int, m OutgoingMessage) (int, error) {
	a, ok := m.MessageAttributes[PriorityAttribute]
	if !s.Priority || !ok {
		return 0, nil
	}
	where := field{i: i, inAttr: true, attr: PriorityAttribute}
	if a.DataType != "Number" && !strings.HasPrefix(a.DataType, "Number.") {
		return 0, invalid("%s: must be of DataType Number on a queue with priorities, got %s", where, quote(a.DataType))
	}
	p, err := strconv.Atoi(a.StringValue)
	if err != nil || p < MinPriority || p > MaxPriority {
		return 0, invalid("%s: must be a whole number from %d to %d (higher first) on a queue with priorities, got %s",
			where, MinPriority, MaxPriority, quote(a.StringValue))
	}
	return p, nil
}
