package sqslambda

import (
	"os/exec"
	"strings"
	"testing"
)

// lambdaRuntime is the module only sqslambda (and the Lambda example, in
// the examples module) may compile in.
const lambdaRuntime = "github.com/aws/aws-lambda-go"

// Only sqslambda depends on the Lambda runtime: a user of consumer,
// sqsmailbox or any other package of the module compiles none of it. (The
// module's packages are ./... from its top; examples/lambda is in the
// examples module. Tests' own imports are not counted: they are not
// compiled into a user's program.)
func TestOnlySqslambdaDependsOnTheLambdaRuntime(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{"github.com/sqsloop/sqsloop/sqslambda": true}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		uses := strings.Contains(" "+deps+" ", " "+lambdaRuntime+"/")
		switch {
		case allowed[pkg]:
			seen++
			if !uses {
				t.Errorf("%s does not depend on %s: the check below checks nothing", pkg, lambdaRuntime)
			}
		case uses:
			t.Errorf("%s depends on %s; only sqslambda may", pkg, lambdaRuntime)
		}
	}
	if seen != len(allowed) {
		t.Errorf("go list saw %d of %v", seen, allowed)
	}
}
