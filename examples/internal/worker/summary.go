package worker

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop/consumer"
)

// Summary is what a run reports at the end.
type Summary struct {
	Ran          bool // the consumer ran (else the run failed before it, and there is nothing to sum up)
	Enqueued     bool // this run enqueued the jobs (Config.Enqueue)
	Files        int  // file jobs enqueued (the stuck, the failing and the malformed job come on top)
	Waiting      int  // jobs an earlier, interrupted run left in the queue (Config.Waiting)
	Stats        consumer.Stats
	DeadLettered int   // moved to the dead-letter queue by its redrive policy
	MaxReceives  int   // the redrive policy's maxReceiveCount, read from the queue; 0: none
	PoisonCounts []int // receive counts of the messages that failed for good (sqsloop.Permanent)
	Bytes        int64 // bytes hashed
	Wall         time.Duration
	Drained      bool // the queue was drained (else the run was shut down first)
	LeftInFlight int  // messages still hidden when the run ended, in memory and in a database: must be 0
	// With Config.State (Jobstate): the file jobs resumed from their
	// checkpoint, the chunks they did not read again, and the deliveries
	// of jobs already done, acked without hashing.
	Jobstate                           bool
	Resumed, ChunksSkipped, Duplicates int64
}

// NormalAcked reports whether every job but the failing one was acked: the
// files and the stuck job (after its redelivery), and the malformed one
// (deleted once its copy reached the dead-letter queue).
func (s *Summary) NormalAcked() bool { return s.Stats.Acked == int64(s.Files+1)+s.Stats.Poisoned }

// Print writes the summary to w.
func (s *Summary) Print(w io.Writer) {
	yes := map[bool]string{true: "yes", false: "NO"}
	fmt.Fprintf(w, "\nsqsloop worker summary\n")
	if s.Enqueued {
		fmt.Fprintf(w, "  jobs enqueued     %d (%d files, 1 stuck, 1 failing, 1 malformed)\n", s.Files+3, s.Files)
	} else if s.Waiting > 0 {
		fmt.Fprintf(w, "  jobs enqueued     none: %d found waiting from an earlier run\n", s.Waiting)
	} else {
		fmt.Fprintf(w, "  jobs enqueued     none (-queue-url without -send: the queue's own messages)\n")
	}
	fmt.Fprintf(w, "  processed         %d handler runs: %d succeeded, %d failed (%d panics)\n",
		s.Stats.Started, s.Stats.Succeeded, s.Stats.Failed, s.Stats.Panics)
	if s.Enqueued {
		fmt.Fprintf(w, "  acked             %d (every normal job acked: %s)\n", s.Stats.Acked, yes[s.NormalAcked()])
	} else {
		fmt.Fprintf(w, "  acked             %d\n", s.Stats.Acked)
	}
	fmt.Fprintf(w, "  extensions sent   %d in %d batch calls (largest batch: %d entries)\n",
		s.Stats.Extensions, s.Stats.ExtensionCalls, s.Stats.LargestExtensionBatch)
	fmt.Fprintf(w, "  leases lost       %d\n", s.Stats.LeasesLost)
	fmt.Fprintf(w, "  redelivered       %d\n", s.Stats.Redelivered)
	if s.MaxReceives > 0 {
		fmt.Fprintf(w, "  dead-lettered     %d (by the redrive policy, after %d receives)\n", s.DeadLettered, s.MaxReceives)
	} else {
		fmt.Fprintf(w, "  dead-lettered     %d (no redrive policy)\n", s.DeadLettered)
	}
	counts := make([]string, len(s.PoisonCounts))
	for i, n := range s.PoisonCounts {
		counts[i] = fmt.Sprint(n)
	}
	fmt.Fprintf(w, "  poison            %d moved to the dead-letter queue at once (receive counts: %s)\n",
		s.Stats.Poisoned, strings.Join(counts, ", "))
	if s.Jobstate {
		fmt.Fprintf(w, "  resumed           %d jobs from their checkpoint (%d chunks not read again)\n", s.Resumed, s.ChunksSkipped)
		fmt.Fprintf(w, "  skipped           %d duplicate deliveries (already done)\n", s.Duplicates)
	}
	fmt.Fprintf(w, "  bytes hashed      %d\n", s.Bytes)
	fmt.Fprintf(w, "  queue drained     %s\n", yes[s.Drained])
	fmt.Fprintf(w, "  wall time         %.1fs\n", s.Wall.Seconds())
}
