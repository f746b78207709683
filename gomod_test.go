package sqsloop_test

import (
	"os/exec"
	"testing"
)

// The library's go.mod requires only the modules its packages and their
// tests import, at the versions they need, and go.sum holds what those need:
// what `go mod tidy` would write (it ignores go.work). A module only the
// examples, the integration tests or the benchmarks import belongs in their
// modules' go.mod, so that a user's build of the library never sees it.
func TestGoModIsTidy(t *testing.T) {
	out, err := exec.Command("go", "mod", "tidy", "-diff").CombinedOutput()
	if err != nil {
		t.Fatalf("go mod tidy -diff: %v: go.mod or go.sum is not what the packages import; run go mod tidy\n%s", err, out)
	}
}
