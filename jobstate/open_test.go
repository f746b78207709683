package jobstate_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
)

// mem://NAME opens the process's Memory of that name: two opens share
// their records, another name does not; a scheme no import registered
// names the package to import.
func TestOpenMem(t *testing.T) {
	a, err := jobstate.Open(t.Context(), "mem://open-test")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := jobstate.Open(t.Context(), "mem://open-test")
	if err != nil {
		t.Fatal(err)
	}
	other, err := jobstate.Open(t.Context(), "mem://open-test-other")
	if err != nil {
		t.Fatal(err)
	}
	rec := jobstate.Record{Key: "k", State: jobstate.Saved, Value: []byte("v"), ExpiresAt: time.Now().Add(time.Hour)}
	if err := a.Put(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(t.Context(), "k"); err != nil || string(got.Value) != "v" {
		t.Errorf("the second open of mem://open-test: %+v, %v; want the record of the first", got, err)
	}
	if _, err := other.Get(t.Context(), "k"); !errors.Is(err, jobstate.ErrNotFound) {
		t.Errorf("mem://open-test-other: %v; want ErrNotFound", err)
	}
	for _, tc := range []struct{ url, says string }{
		{"dynamodb://jobs", `import _ "github.com/sqsloop/sqsloop/jobstate/dynamostore"`},
		{"postgres://app:s3cret@db/app", `import _ "github.com/sqsloop/sqsloop/jobstate/pgstate"`},
		{"mem://x?retention=1h", "without a path or parameters"},
	} {
		_, err := jobstate.Open(t.Context(), tc.url)
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) = %v; want ErrInvalidArgument saying %s, without the password", tc.url, err, tc.says)
		}
	}
}
