package integration

import (
	"testing"

	"github.com/sqsloop/sqsloop/mailboxtest"
)

// TestMemmailboxConformance runs the conformance suite on memmailbox, in
// virtual time.
func TestMemmailboxConformance(t *testing.T) {
	mailboxtest.Run(t, memHarness{})
}
