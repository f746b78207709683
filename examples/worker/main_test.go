package main

import (
	"testing"

	"github.com/sqsloop/sqsloop/examples/internal/worker/workertest"
)

// The signal tests start the worker as a process of its own: this test
// binary, running main (workertest.Start).
func TestMain(m *testing.M) { workertest.Main(m, main) }
