package dynamostore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
)

// dynamodb://TABLE opens the store on that table without a request (as
// New); region and endpoint are its only parameters.
func TestOpenURL(t *testing.T) {
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := jobstate.Open(t.Context(), "dynamodb://sqsloop-jobs?region=eu-west-1&endpoint=http://127.0.0.1:8000")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ url, says string }{
		{"dynamodb://sqsloop-jobs?table=x", `unknown parameter "table"`},
		{"dynamodb:///sqsloop-jobs?region=eu-west-1", "want dynamodb://TABLE"},
		{"dynamodb://ab?region=eu-west-1", "3-255"},
	} {
		if _, err := jobstate.Open(t.Context(), tc.url); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Open(%q) = %v; want ErrInvalidArgument saying %s", tc.url, err, tc.says)
		}
	}
}
