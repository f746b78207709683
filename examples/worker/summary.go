package main

import (
	"fmt"
	"io"
	"time"

	"github.com/sqsloop/sqsloop/consumer"
)

// summary is what the worker reports at the end.
type summary struct {
	enqueued     bool // this run enqueued the jobs (in memory, or with -send)
	files        int  // file jobs enqueued (the stuck and the failing job come on top)
	st           consumer.Stats
	deadLettered int
	bytes        int64
	wall         time.Duration
	drained      bool
	leftInFlight int // messages still hidden when the run ended: must be 0
	waiting      int // jobs an earlier, interrupted run left in the database (-mailbox)
}

// normalAcked reports whether every job but the failing one was acked: the
// files and the stuck job (after its redelivery).
func (s *summary) normalAcked() bool { return s.st.Acked == int64(s.files+1) }

func (s *summary) print(w io.Writer) {
	yes := map[bool]string{true: "yes", false: "NO"}
	fmt.Fprintf(w, "\nsqsloop worker summary\n")
	if s.enqueued {
		fmt.Fprintf(w, "  jobs enqueued     %d (%d files, 1 stuck, 1 failing)\n", s.files+2, s.files)
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
	fmt.Fprintf(w, "  dead-lettered     %d\n", s.deadLettered)
	fmt.Fprintf(w, "  bytes hashed      %d\n", s.bytes)
	fmt.Fprintf(w, "  queue drained     %s\n", yes[s.drained])
	fmt.Fprintf(w, "  wall time         %.1fs\n", s.wall.Seconds())
}
