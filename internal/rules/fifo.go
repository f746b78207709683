package rules

import "github.com/sqsloop/sqsloop"

// FIFO reports whether m belongs to a FIFO queue's message group: it has a
// message group ID and a SequenceNumber, which SQS gives FIFO messages
// only. A standard queue's message may carry a MessageGroupId too (fair
// queues), which orders nothing. The consumer and sqslambda run a group's
// messages in order on one goroutine by this rule, and a poison message's
// copy carries its group and deduplication ID by it.
func FIFO(m *sqsloop.Message) bool {
	return m.MessageGroupID != "" && m.Attributes[sqsloop.AttrSequenceNumber] != ""
}
