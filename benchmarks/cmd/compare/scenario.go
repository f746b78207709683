package main

import "time"

// scenario is one workload: how many messages, how long each handler runs,
// how many handlers at once, and the lease timings every implementation is
// given.
type scenario struct {
	name        string
	messages    int
	concurrency int
	// work is how long the handler runs; it beats every beatEvery meanwhile.
	work, beatEvery time.Duration
	// visibility is the queue's visibility timeout, which every
	// implementation also receives with.
	visibility time.Duration
	// interval is how often leases are extended and extension by how much
	// (sqsloop: visibility.Config; naive: its per-message ticker).
	interval, extension time.Duration
	// latency holds each of the consumer's requests this long before
	// sending, emulating the round trip to a remote SQS endpoint.
	latency time.Duration
	// timeout bounds one run.
	timeout time.Duration
	// workers is how many consumers of the implementation share the queue
	// at once, each with a client and a consumer of its own, as separate
	// processes would (0 means 1); concurrency is each one's.
	workers int
	// long marks the scenarios of jobs of seconds, whose repetitions
	// -long-reps caps.
	long bool
}

// workerCount is how many consumers share the queue.
func (s scenario) workerCount() int { return max(s.workers, 1) }

// scenarios returns the scenarios of issues 4 and 9, in run order. slowInterval is
// sqsloop's and the naive loop's extension interval in the slow scenario
// (see the README: the 1 s is not under half of the 2 s visibility
// timeout, which package visibility requires); the concurrencies are the
// handlers at once in the slow and in the fast scenarios.
func scenarios(slowInterval time.Duration, slowConcurrency, fastConcurrency int) []scenario {
	return []scenario{
		{name: "fast", messages: 2_000, concurrency: fastConcurrency,
			visibility: 30 * time.Second, interval: 10 * time.Second, extension: 30 * time.Second, timeout: 2 * time.Minute},
		{name: "fast-20k", messages: 20_000, concurrency: fastConcurrency,
			visibility: 30 * time.Second, interval: 10 * time.Second, extension: 30 * time.Second, timeout: 5 * time.Minute},
		// Not in the issue: fast again, with a 10 ms round trip on every
		// request of the consumer, as on a real SQS endpoint; locally the
		// round trip is well under a millisecond, which hides how many
		// requests an implementation keeps in flight at once.
		{name: "fast-rtt10ms", messages: 2_000, concurrency: fastConcurrency, latency: 10 * time.Millisecond,
			visibility: 30 * time.Second, interval: 10 * time.Second, extension: 30 * time.Second, timeout: 2 * time.Minute},
		{name: "slow", messages: 40, concurrency: slowConcurrency, work: 5 * time.Second, beatEvery: 500 * time.Millisecond,
			visibility: 2 * time.Second, interval: slowInterval, extension: 3 * time.Second, timeout: 2 * time.Minute, long: true},
		// Issue 9: slow's jobs and leases, consumed by two workers of the
		// implementation at once, as two processes sharing the queue. With
		// 32 slots for 40 jobs, a worker that holds messages it cannot start
		// keeps them from the other's free slots.
		{name: "two-workers", messages: 40, concurrency: slowConcurrency, work: 5 * time.Second, beatEvery: 500 * time.Millisecond,
			visibility: 2 * time.Second, interval: slowInterval, extension: 3 * time.Second, timeout: 2 * time.Minute, long: true, workers: 2},
	}
}
