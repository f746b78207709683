package sqslambda

import (
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// AWS's published guidance for a queue behind an event source mapping
// (Lambda developer guide, "Creating and configuring an Amazon SQS event
// source mapping"): a visibility timeout of at least six times the
// function timeout, so that Lambda can retry a throttled invocation before
// the batch becomes visible again, and a dead-letter queue with a
// maxReceiveCount of at least 5.
const (
	visibilityFactor   = 6
	minMaxReceiveCount = 5
)

// queueWarnings lists what in attrs goes against AWS's guidance.
// functionTimeout is the invocation's time, as its deadline tells (0 when
// it has none).
func queueWarnings(attrs sqsloop.QueueAttributes, functionTimeout time.Duration) []string {
	var ws []string
	if want := visibilityFactor * functionTimeout; functionTimeout > 0 && attrs.VisibilityTimeout < want {
		ws = append(ws, fmt.Sprintf("the queue's visibility timeout (%v) is less than 6× the function timeout (%v, from this invocation's deadline): "+
			"AWS advises at least %v (plus the event source mapping's batching window), so that a batch whose invocation is throttled "+
			"and retried does not become visible and run twice meanwhile", attrs.VisibilityTimeout, functionTimeout, want))
	}
	switch {
	case attrs.MaxReceiveCount == 0:
		ws = append(ws, "the queue has no redrive policy: a record that always fails is retried until the queue's retention period ends; "+
			"AWS advises a dead-letter queue with a maxReceiveCount of at least 5")
	case attrs.MaxReceiveCount < minMaxReceiveCount:
		ws = append(ws, fmt.Sprintf("the queue's maxReceiveCount (%d) is below 5, AWS's advice for Lambda: every throttled, "+
			"cut-off or interrupted batch counts as a receive, so healthy records can reach the dead-letter queue %s",
			attrs.MaxReceiveCount, attrs.DeadLetterQueue))
	}
	return ws
}
