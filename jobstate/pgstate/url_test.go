package pgstate_test

import (
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/jobstate"
)

// A postgres:// URL opens the database's store (migrated beforehand), its
// pool closed by Close.
func TestOpenURL(t *testing.T) {
	s, err := jobstate.Open(t.Context(), dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := jobstate.Record{Key: "open-url-" + t.Name(), State: jobstate.Saved, Value: []byte("v"), ExpiresAt: time.Now().Add(time.Hour)}
	if err := s.Put(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(t.Context(), rec.Key); err != nil || string(got.Value) != "v" {
		t.Errorf("Get: %+v, %v; want the record", got, err)
	}
}
