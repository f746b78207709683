package main

import (
	"os"
	"testing"
)

// workerProcessEnv, set in the environment, makes the test binary run the
// worker's main (with the arguments it was started with) instead of the
// tests: the signal tests start the worker as a process of its own that way.
const workerProcessEnv = "SQSLOOP_WORKER_PROCESS"

func TestMain(m *testing.M) {
	if os.Getenv(workerProcessEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
