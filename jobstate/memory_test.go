package jobstate_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/internal/jobbench"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/storetest"
)

// Memory passes the conformance suite: every client the same Memory.
func TestMemoryConformance(t *testing.T) {
	var m jobstate.Memory
	storetest.Run(t, storetest.HarnessFunc(func(*testing.T) jobstate.Store { return &m }))
}

// Memory's expired records are dropped by the scan of every 1,024 writes:
// its map follows the live records.
func TestMemoryDropsExpiredRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m jobstate.Memory
		for i := range 1000 {
			put(t, &m, jobstate.Record{Key: key(i), State: jobstate.Saved, ExpiresAt: time.Now().Add(time.Minute)})
		}
		time.Sleep(2 * time.Minute)
		for i := range 24 {
			put(t, &m, jobstate.Record{Key: key(1000 + i), State: jobstate.Saved})
		}
		if n := m.Len(); n != 24 {
			t.Errorf("%d records kept after the scan, want the 24 live ones", n)
		}
	})
}

func key(i int) string { return fmt.Sprint("k", i) }

func put(t *testing.T, s jobstate.Store, r jobstate.Record) {
	t.Helper()
	if err := s.Put(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

// What the middlewares add per message on Memory (jobbench.Benchmark).
func BenchmarkMemory(b *testing.B) { jobbench.Benchmark(b, &jobstate.Memory{}) }
