package console_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The console compiles no database driver (a program gives it a Store it
// opened), and nothing of the consumer's build compiles the console.
func TestDependencies(t *testing.T) {
	for _, tc := range []struct {
		pkg     string
		without []string
	}{
		{".", []string{"modernc.org/sqlite", "github.com/jackc/pgx"}},
		{"../consumer", []string{"github.com/sqsloop/sqsloop/console"}},
	} {
		out, err := exec.Command("go", "list", "-deps", tc.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tc.pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, banned := range tc.without {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("go list -deps %s holds %s", tc.pkg, dep)
				}
			}
		}
	}
}
