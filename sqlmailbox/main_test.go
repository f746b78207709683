package sqlmailbox_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: a Store's listener
// and its database connections stop at Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
