package sqlmailbox_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Database drivers stay out of the builds that do not use them: a program
// that uses the consumer on SQS, memmailbox, or sqlmailbox's semantics
// compiles neither driver, and one that uses SQLite compiles no pgx (and the
// reverse). The check reads `go list -deps`, the packages a build compiles.
func TestDriversStayInTheirPackages(t *testing.T) {
	const (
		sqlite = "modernc.org/sqlite"
		pgx    = "github.com/jackc/pgx"
	)
	for _, tc := range []struct {
		pkgs          []string
		with, without []string
	}{
		{[]string{"../consumer", "../sqsmailbox", "../memmailbox", "../visibility", "../lifecycle", "."}, nil, []string{sqlite, pgx}},
		{[]string{"./sqlite"}, []string{sqlite}, []string{pgx}},
		{[]string{"./postgres"}, []string{pgx}, []string{sqlite}},
	} {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, tc.pkgs...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %v: %v\n%s", tc.pkgs, err, out)
		}
		deps := strings.Fields(string(out))
		for _, dep := range deps {
			for _, banned := range tc.without {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("go list -deps %v holds %s: a program using them would compile %s", tc.pkgs, dep, banned)
				}
			}
		}
		for _, want := range tc.with { // the check can see a driver
			if !strings.Contains(string(out), want) {
				t.Errorf("go list -deps %v lacks %s, its own driver: the check reads the wrong list", tc.pkgs, want)
			}
		}
	}
}
