package sqlitestate_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
	_ "github.com/sqsloop/sqsloop/jobstate/sqlitestate" // registers sqlite:
)

// A sqlite: URL opens the file's store, absolute or relative; the records
// outlive the Store that wrote them. Parameters are refused by name.
func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s, err := jobstate.Open(t.Context(), "sqlite:state.db")
	if err != nil {
		t.Fatal(err)
	}
	rec := jobstate.Record{Key: "k", State: jobstate.Saved, Value: []byte("v"), ExpiresAt: time.Now().Add(time.Hour)}
	if err := s.Put(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = jobstate.Open(t.Context(), "sqlite://"+filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Get(t.Context(), "k"); err != nil || string(got.Value) != "v" {
		t.Errorf("reopened by its absolute path: %+v, %v; want the record", got, err)
	}
	if _, err := jobstate.Open(t.Context(), "sqlite:state.db?queue=jobs"); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), `unknown parameter "queue"`) {
		t.Errorf("a parameter: %v; want it refused by name", err)
	}
}
