package memmailbox_test

import (
	"testing"

	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// TestMemmailboxConformance runs the conformance suite on memmailbox
// (harness.Mem), every scenario in virtual time: the whole suite takes next
// to no wall-clock time.
func TestMemmailboxConformance(t *testing.T) {
	mailboxtest.Run(t, harness.Mem{})
}
