package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop/consumer"
)

// summary is what the worker reports at the end.
type summary struct {
	ran          bool // the consumer ran (else the run failed before it, and there is nothing to sum up)
	enqueued     bool // this run enqueued the jobs (in memory, on a queue it set up, or with -send)
	files        int  // file jobs enqueued (the stuck, the failing and the malformed job come on top)
	st           consumer.Stats
	deadLettered int   // moved to the dead-letter queue by its redrive policy
	maxReceives  int   // the redrive policy's maxReceiveCount, read from the queue; 0: none
	poisonCounts []int // receive counts of the messages that failed for good (consumer.Permanent)
	bytes        int64
	wall         time.Duration
	drained      bool
	leftInFlight int // messages still hidden when the run ended: must be 0
	waiting      int // jobs an earlier, interrupted run left in the database (-mailbox)
}

// normalAcked reports whether every job but the failing one was acked: the
// files and the stuck job (after its redelivery), and the malformed one
// (deleted once its copy reached the dead-letter queue).
func (s *summary) normalAcked() bool { return s.st.Acked == int64(s.files+1)+s.st.Poisoned }

func (s *summary) print(w io.Writer) {
	yes := map[bool]string{true: "yes", false: "NO"}
	fmt.Fprintf(w, "\nsqsloop worker summary\n")
	if s.enqueued {
		fmt.Fprintf(w, "  jobs enqueued     %d (%d files, 1 stuck, 1 failing, 1 malformed)\n", s.files+3, s.files)
	} else if s.waiting > 0 {
		fmt.Fprintf(w, "  jobs enqueued     none: %d found waiting from an earlier run\n", s.waiting)
	} else {
		fmt.Fprintf(w, "  jobs enqueued     none (-queue-url without -send: the queue's own messages)\n")
	}
	fmt.Fprintf(w, "  processed         %d handler runs: %d succeeded, %d failed (%d panics)\n",
		s.st.Started, s.st.Succeeded, s.st.Failed, s.st.Panics)
	if s.enqueued {
		fmt.Fprintf(w, "  acked             %d (every normal job acked: %s)\n", s.st.Acked, yes[s.normalAcked()])
	} else {
		fmt.Fprintf(w, "  acked             %d\n", s.st.Acked)
	}
	fmt.Fprintf(w, "  extensions sent   %d in %d batch calls (largest batch: %d entries)\n",
		s.st.Extensions, s.st.ExtensionCalls, s.st.LargestExtensionBatch)
	fmt.Fprintf(w, "  leases lost       %d\n", s.st.LeasesLost)
	fmt.Fprintf(w, "  redelivered       %d\n", s.st.Redelivered)
	if s.maxReceives > 0 {
		fmt.Fprintf(w, "  dead-lettered     %d (by the redrive policy, after %d receives)\n", s.deadLettered, s.maxReceives)
	} else {
		fmt.Fprintf(w, "  dead-lettered     %d (no redrive policy)\n", s.deadLettered)
	}
	counts := make([]string, len(s.poisonCounts))
	for i, n := range s.poisonCounts {
		counts[i] = fmt.Sprint(n)
	}
	fmt.Fprintf(w, "  poison            %d moved to the dead-letter queue at once (receive counts: %s)\n",
		s.st.Poisoned, strings.Join(counts, ", "))
	fmt.Fprintf(w, "  bytes hashed      %d\n", s.bytes)
	fmt.Fprintf(w, "  queue drained     %s\n", yes[s.drained])
	fmt.Fprintf(w, "  wall time         %.1fs\n", s.wall.Seconds())
}
