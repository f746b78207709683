package jobstate_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Each store's driver stays in its package: a program using checkpoints or
// idempotency on one store compiles no other store's driver, and the
// middlewares and the contract compile none. The check reads `go list
// -deps`, the packages a build compiles.
func TestDriversStayInTheirPackages(t *testing.T) {
	const (
		sqlite = "modernc.org/sqlite"
		pgx    = "github.com/jackc/pgx"
		dynamo = "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	)
	all := []string{sqlite, pgx, dynamo}
	for _, tc := range []struct {
		pkgs []string
		with string
	}{
		{[]string{".", "../checkpoint", "../idempotency", "../consumer", "../sqsmailbox"}, ""},
		{[]string{"./sqlitestate"}, sqlite},
		{[]string{"./pgstate"}, pgx},
		{[]string{"./dynamostore"}, dynamo},
	} {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, tc.pkgs...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %v: %v\n%s", tc.pkgs, err, out)
		}
		deps := strings.Fields(string(out))
		for _, banned := range all {
			if banned == tc.with {
				continue
			}
			for _, dep := range deps {
				if strings.HasPrefix(dep, banned) {
					t.Errorf("go list -deps %v holds %s: a program using them would compile %s", tc.pkgs, dep, banned)
					break
				}
			}
		}
		if tc.with != "" && !strings.Contains(string(out), tc.with) { // the check can see a driver
			t.Errorf("go list -deps %v lacks %s, its own driver: the check reads the wrong list", tc.pkgs, tc.with)
		}
	}
}

// The conformance kit imports only what it tests (the root, jobstate and
// testing), never the packages built on a Store: a store's author
// compiles no middleware to test a store.
func TestStoretestImportsOnlyWhatItTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./storetest").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./storetest: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/sqsloop/sqsloop/") && dep != "github.com/sqsloop/sqsloop/jobstate" &&
			dep != "github.com/sqsloop/sqsloop/jobstate/storetest" {
			t.Errorf("go list -deps ./storetest holds %s: the kit imports only the root and jobstate", dep)
		}
	}
}
