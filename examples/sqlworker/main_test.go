package main

import (
	"testing"

	"github.com/sqsloop/sqsloop/examples/internal/worker/workertest"
)

// The kill test starts the program as a process of its own: this test
// binary, running main (workertest.Start).
func TestMain(m *testing.M) { workertest.Main(m, main) }
