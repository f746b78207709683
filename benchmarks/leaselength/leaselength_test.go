package leaselength

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// TestLeaseTable measures every setting on every case, on memmailbox in
// virtual time (go test -run TestLeaseTable -v ./leaselength prints the
// table), and checks what the adaptive extension promises against the
// fixed ones: once warm, no healthy lease lost; a stuck handler loses its
// lease no later; at most one extension per look that finds a beat, and
// none for jobs shorter than the visibility timeout.
func TestLeaseTable(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	results := map[string]Result{}
	var all []Result
	for _, c := range Cases() {
		for _, s := range Settings() {
			synctest.Test(t, func(t *testing.T) {
				b := new(memmailbox.Broker)
				defer b.Close()
				q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: QueueVisibilityTimeout})
				if err != nil {
					t.Fatal(err)
				}
				r, err := Run(t.Context(), q, s, c, 10, quiet)
				if err != nil {
					t.Fatalf("%s, %v: %v", s.Name, c, err)
				}
				results[s.Name+" "+c.String()] = r
				all = append(all, r)
			})
		}
	}
	var table strings.Builder
	WriteTable(&table, all)
	t.Log("\n" + table.String())

	last := func(r Result) time.Duration { return r.Lapses[len(r.Lapses)-1] }
	for _, c := range Cases() {
		for _, pair := range [][2]string{{"adaptive", "fixed 30s"}, {"adaptive 2m", "fixed 2m"}} {
			adaptive, fixed := results[pair[0]+" "+c.String()], results[pair[1]+" "+c.String()]
			if adaptive.WarmupLost+adaptive.HealthyLost != 0 {
				t.Errorf("%v: %s lost %d healthy leases", c, pair[0], adaptive.WarmupLost+adaptive.HealthyLost)
			}
			if fixed.HealthyLost > 0 {
				continue // the fixed extension cannot keep these leases: nothing to compare
			}
			if last(adaptive) > last(fixed) {
				t.Errorf("%v: a stuck handler loses its lease up to %v after its last beat with %s, %v with %s", c, last(adaptive), pair[0], last(fixed), pair[1])
			}
		}
	}
	// Every setting extends a lease at most once per look that finds a new
	// beat (one per max(Interval, Beat)), give or take the first look and
	// the phase of the job's end; the healthy leases of a job shorter than
	// the visibility timeout cost an adaptive lease owner none.
	for _, s := range Settings() {
		vt := s.Config.VisibilityTimeout
		if vt == 0 {
			vt = QueueVisibilityTimeout
		}
		interval := vt / 5 // visibility.Config's default Interval
		for _, c := range Cases() {
			r := results[s.Name+" "+c.String()]
			limit := int64(r.N) * int64(c.Job/max(interval, c.Beat)+2)
			if r.Extensions > limit {
				t.Errorf("%s, %v: %d extensions of %d messages, want at most %d (one per look that finds a beat)", s.Name, c, r.Extensions, r.N, limit)
			}
			if s.Config.Visibility.Extension == 0 && c.Job < vt && r.Extensions != 0 {
				t.Errorf("%s, %v: %d extensions of jobs shorter than the visibility timeout, want 0", s.Name, c, r.Extensions)
			}
		}
	}
}
