package sqsloop_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
	_ "github.com/sqsloop/sqsloop/memmailbox"
)

// OpenMailbox's errors name what is wrong: a scheme no import registered
// (with the package to import), no scheme, a URL that does not parse; a
// password never shows.
func TestOpenMailboxErrors(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"postgres://app:s3cret@db/app?queue=jobs", `import _ "github.com/sqsloop/sqsloop/sqlmailbox/postgres"`},
		{"sqlite:jobs.db?queue=jobs", `import _ "github.com/sqsloop/sqsloop/sqlmailbox/sqlite"`},
		{"kafka://jobs", `no mailbox registered for the scheme "kafka"; registered: mem`},
		{"jobs.db", "no scheme"},
		{"postgres://app:s3cret@db:bad port/app", "postgres:…"},
	} {
		_, err := sqsloop.OpenMailbox(t.Context(), tc.url)
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("OpenMailbox(%q) = %v; want ErrInvalidArgument saying %s, without the password", tc.url, err, tc.want)
		}
	}
}

func TestRegisterMailboxTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering mem twice did not panic")
		}
	}()
	sqsloop.RegisterMailbox("mem", nil)
}

// A program that opens its queue from a URL on SQS or in memory compiles
// no database driver, no DynamoDB client and no OpenTelemetry: the
// openers register from their own packages. The check reads `go list
// -deps`, the packages a build compiles.
func TestOpeningAURLCompilesOnlyTheMailboxesImported(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".", "./memmailbox", "./sqsmailbox", "./consumer", "./jobstate").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/aws/aws-sdk-go-v2/service/dynamodb",
		"go.opentelemetry.io/", "github.com/prometheus/"} {
		for _, dep := range deps {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("a program opening SQS or memory queues compiles %s", dep)
				break
			}
		}
	}
	if !strings.Contains(string(out), "github.com/aws/aws-sdk-go-v2/service/sqs") {
		t.Error("go list -deps lacks the SQS client: the check reads the wrong list")
	}
}
