package otelsqsloop_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// What the library's packages compile in (`go list -deps` of the module's
// packages, ./... from its top: the examples, integration and benchmarks
// modules are not among them; tests' own imports are not counted: they are
// not compiled into a user's program): no OpenTelemetry SDK or exporter,
// Prometheus client, browser driver or container client in any of them
// but telemetry, the one-call server, the only package that imports the
// SDK and the Prometheus exporter; and OpenTelemetry's API in otelsqsloop
// and telemetry alone, so that a user of consumer and sqsmailbox compiles
// none of it.
func TestOnlyOtelsqsloopDependsOnOpenTelemetry(t *testing.T) {
	const (
		self   = "github.com/sqsloop/sqsloop/otelsqsloop"
		server = "github.com/sqsloop/sqsloop/telemetry"
		otel   = "go.opentelemetry.io/"
	)
	heavy := []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters/", "github.com/prometheus/",
		"github.com/chromedp/", "github.com/testcontainers/", "github.com/docker/"}
	serverMay := heavy[:3] // the SDK, the exporter, the Prometheus client
	list := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = ".."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
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
	// otelsqsloop's tests compile the SDK: the check below can see it.
	if len(uses(list("-deps", "-test", "./otelsqsloop"), heavy[0])) == 0 {
		t.Errorf("otelsqsloop's tests compile no OpenTelemetry SDK: the check below sees nothing")
	}
	checked, sawSelf, sawServer := 0, false, false
	for _, line := range list("-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		if strings.Contains(pkg, "/internal/") {
			continue
		}
		checked++
		for _, h := range heavy {
			if pkg == server && slices.Contains(serverMay, h) {
				if len(uses(deps, h)) == 0 {
					t.Errorf("%s does not compile %s: the check below sees nothing", server, h)
				}
				sawServer = true
				continue
			}
			if found := uses(deps, h); len(found) > 0 {
				t.Errorf("%s compiles in %v", pkg, found)
			}
		}
		api := uses(deps, otel)
		switch {
		case pkg == self:
			sawSelf = true
			if len(api) == 0 {
				t.Errorf("%s does not depend on OpenTelemetry's API: the check below sees nothing", self)
			}
		case pkg == server:
		case len(api) > 0:
			t.Errorf("%s compiles in OpenTelemetry (only otelsqsloop and telemetry may): %v", pkg, api[:min(len(api), 3)])
		}
	}
	if !sawSelf || !sawServer || checked < 10 {
		t.Errorf("go list listed %d library packages (otelsqsloop: %v, telemetry: %v): the check reads the wrong list", checked, sawSelf, sawServer)
	}
}
