package integration

import "testing"

// TestMemmailboxConformance runs the conformance suite on memmailbox, in
// virtual time.
func TestMemmailboxConformance(t *testing.T) {
	RunConformance(t, MemHarness{})
}
