package integration_test

import (
	"fmt"

	"github.com/sqsloop/sqsloop/integration"
)

// The scenarios every Mailbox passes, by the names test logs use for every
// harness. RunConformance(t, harness) runs them.
func ExampleScenarioNames() {
	for _, name := range integration.ScenarioNames()[:4] {
		fmt.Println(name)
	}
	// Output:
	// TestRoundTripWithAttributes
	// TestVisibilityHidesThenReveals
	// TestExtendKeepsHiddenPastOriginalTimeout
	// TestNackRevealsAtOnce
}

// A harness declares where its implementation departs from Amazon SQS;
// scenarios log those departures by name instead of failing on them.
func ExampleMemHarness_Features() {
	f := integration.MemHarness{}.Features()
	fmt.Println("virtual time:", f.VirtualTime)
	fmt.Println("sub-second visibility:", f.SubSecondVisibility)
	// Output:
	// virtual time: true
	// sub-second visibility: true
}
