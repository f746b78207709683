package integration

import (
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/mailboxtest"
)

// TestSqsmailboxConformance runs the conformance suite on sqsmailbox against
// a real SQS-compatible server, on the wall clock.
func TestSqsmailboxConformance(t *testing.T) {
	h := sqsServerHarness(t)
	start := time.Now()
	t.Cleanup(func() { t.Logf("%s: conformance suite took %v", h.Name(), time.Since(start).Round(time.Millisecond)) })
	mailboxtest.Run(t, h)
}
