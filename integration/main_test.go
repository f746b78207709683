package integration

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, stops the SQS server if a test started one (see
// sqsServerHarness), then checks that no goroutine outlived them. Started
// with childEnv set, the binary is instead a consumer process of the
// process tests (childMain), with jobChildEnv one of the checkpoint and
// idempotency tests (jobChildMain), and with rateChildEnv one of the rate
// limit tests (rateChildMain).
func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		os.Exit(childMain(cfg))
	}
	if cfg := os.Getenv(jobChildEnv); cfg != "" {
		os.Exit(jobChildMain(cfg))
	}
	if cfg := os.Getenv(rateChildEnv); cfg != "" {
		os.Exit(rateChildMain(cfg))
	}
	code := m.Run()
	if err := stopSQSServer(); err != nil {
		fmt.Fprintln(os.Stderr, "integration: stopping the SQS server:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "integration: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}
