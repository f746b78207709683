package otelsqsloop_test

import (
	"os/exec"
	"strings"
	"testing"
)

// What the library's packages compile in (`go list -deps`; tests' own
// imports are not counted: they are not compiled into a user's program):
// no OpenTelemetry SDK or exporter, Prometheus client, browser driver or
// container client in any of them (those are the tests', the examples' and
// the integration module's), and OpenTelemetry's API in otelsqsloop alone,
// so that a user of consumer and sqsmailbox compiles none of it.
func TestOnlyOtelsqsloopDependsOnOpenTelemetry(t *testing.T) {
	const (
		self   = "github.com/sqsloop/sqsloop/otelsqsloop"
		worker = "github.com/sqsloop/sqsloop/examples/otelworker" // compiles the SDK and Prometheus: the check can see them
		otel   = "go.opentelemetry.io/"
	)
	heavy := []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters/", "github.com/prometheus/",
		"github.com/chromedp/", "github.com/testcontainers/", "github.com/docker/"}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "github.com/sqsloop/sqsloop/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	uses := func(deps []string, prefix string) []string {
		var found []string
		for _, d := range deps {
			if strings.HasPrefix(d, prefix) {
				found = append(found, d)
			}
		}
		return found
	}
	checked, sawSelf, sawWorker := 0, false, false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		switch {
		case pkg == worker:
			sawWorker = true
			if len(uses(deps, heavy[0])) == 0 || len(uses(deps, "github.com/prometheus/")) == 0 {
				t.Errorf("%s compiles no OpenTelemetry SDK or Prometheus client: the check below sees nothing", worker)
			}
			continue
		case strings.Contains(pkg, "/examples/"), strings.Contains(pkg, "/internal/"):
			continue
		}
		checked++
		for _, h := range heavy {
			if found := uses(deps, h); len(found) > 0 {
				t.Errorf("%s compiles in %v", pkg, found)
			}
		}
		api := uses(deps, otel)
		if pkg == self {
			sawSelf = true
			if len(api) == 0 {
				t.Errorf("%s does not depend on OpenTelemetry's API: the check below sees nothing", self)
			}
		} else if len(api) > 0 {
			t.Errorf("%s compiles in OpenTelemetry (only otelsqsloop may): %v", pkg, api[:min(len(api), 3)])
		}
	}
	if !sawSelf || !sawWorker || checked < 10 {
		t.Errorf("go list listed %d library packages (otelsqsloop: %v, the worker: %v): the check reads the wrong list", checked, sawSelf, sawWorker)
	}
}
