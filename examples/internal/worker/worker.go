// Package worker is sqsloop's main job, shared by the example programs that
// run it (examples/worker in memory and on SQS, examples/sqlworker on a
// database, examples/otelworker with OpenTelemetry): one job per file of a
// directory, enqueued as JSON with the batching producer (plus a job that
// gets stuck, one that always fails and one that is not JSON), each file
// hashed with SHA-256 by a consumer's handler through a reader that beats
// its heartbeat, progress printed every second and a summary at the end.
//
// A program opens its queue (OpenMemory, SQS.Open, or NewQueue on a
// mailbox of its own), then calls Run; Main is the main function around it.
package worker

import (
	"flag"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Settings of the queue the programs set up (in memory, on an SQS-compatible
// server, in a database): short leases so that extensions show, and a
// redrive policy so that the failing job reaches the dead-letter queue.
const (
	// QueueName is the queue's name in memory and in a database, and
	// -queue's default on a server.
	QueueName = "jobs"
	// Lease is the visibility timeout the consumer receives with.
	Lease = 2 * time.Second
	// MaxReceiveCount is the redrive policy's: the failing job is
	// dead-lettered after its third receive.
	MaxReceiveCount = 3
)

// Spec is the queue the programs set up, named name, with its dead-letter
// queue name-dlq.
func Spec(name string) sqsloop.QueueSpec {
	return sqsloop.QueueSpec{Name: name, VisibilityTimeout: Lease, MaxReceiveCount: MaxReceiveCount}
}

// LeasesPath is where -metrics-addr serves the lease page.
const LeasesPath = "/debug/sqsloop"

// Options are the flags every program has: the jobs' shape and how the
// run is watched.
type Options struct {
	Dir         string        // directory whose files become jobs
	Slow        time.Duration // pause after each chunk read
	Chunks      int           // chunks each file is read in
	Concurrency int           // handlers at once
	Progress    time.Duration // how often to print progress; 0: never
	MetricsAddr string        // serve the probes and the lease page here; "": nothing
}

// Flags defines the options' flags on fs, with their defaults; paths are
// what the program serves on -metrics-addr besides the probes and the lease
// page.
func (o *Options) Flags(fs *flag.FlagSet, paths ...string) {
	fs.StringVar(&o.Dir, "dir", ".", "directory whose files become jobs (skips .git and node_modules)")
	fs.DurationVar(&o.Slow, "slow", 50*time.Millisecond, "delay per chunk read, so jobs outlive their 2 s lease")
	fs.IntVar(&o.Chunks, "chunks", 48, "chunks each file is read in (each beats the heartbeat)")
	fs.IntVar(&o.Concurrency, "concurrency", 32, "handlers at once")
	fs.DurationVar(&o.Progress, "progress", time.Second, "how often to print progress (0: never)")
	served := append([]string{"the health probes (/livez, /readyz)", "the lease page (" + LeasesPath + ")"}, paths...)
	fs.StringVar(&o.MetricsAddr, "metrics-addr", "", "serve "+strings.Join(served, ", ")+" on this address, e.g. 127.0.0.1:9464")
}
