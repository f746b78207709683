package mailboxtest_test

import (
	"fmt"

	"github.com/sqsloop/sqsloop/mailboxtest"
)

// The scenarios every Mailbox passes, by the names test logs use for every
// harness: mailboxtest.Run(t, harness) runs them as subtests of t.
func ExampleScenarioNames() {
	for _, name := range mailboxtest.ScenarioNames()[:4] {
		fmt.Println(name)
	}
	// Output:
	// TestRoundTripWithAttributes
	// TestVisibilityHidesThenReveals
	// TestExtendKeepsHiddenPastOriginalTimeout
	// TestNackRevealsAtOnce
}
