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
// table), and checks what the lease rule promises: the adaptive extension
// loses no healthy lease; a stuck handler loses its lease within the
// documented bound (its extension + Interval, + 1 s as SQS counts whole
// seconds); for handlers beating every second the adaptive extension costs
// fewer extensions than the fixed one of its visibility timeout; at most
// one extension per look that finds a beat, and none for jobs shorter than
// the visibility timeout.
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

	interval := func(s Setting) time.Duration { // visibility.Config's default Interval
		vt := s.Config.VisibilityTimeout
		if vt == 0 {
			vt = QueueVisibilityTimeout
		}
		return vt / 5
	}
	for _, c := range Cases() {
		for _, s := range Settings() {
			r := results[s.Name+" "+c.String()]
			if s.Config.Visibility.Extension == 0 && r.WarmupLost+r.HealthyLost != 0 {
				t.Errorf("%v: %s lost %d healthy leases", c, s.Name, r.WarmupLost+r.HealthyLost)
			}
			if r.HealthyLost > 0 {
				continue // the fixed extension cannot keep these leases: no stuck handler to time
			}
			if bound := r.Extension + interval(s) + time.Second; r.Lapses[len(r.Lapses)-1] > bound {
				t.Errorf("%v, %s: a stuck handler loses its lease up to %v after its last beat, more than its extension + Interval (%v)", c, s.Name, r.Lapses[len(r.Lapses)-1], bound)
			}
		}
		for _, pair := range [][2]string{{"adaptive", "fixed 30s"}, {"adaptive 2m", "fixed 2m"}} {
			adaptive, fixed := results[pair[0]+" "+c.String()], results[pair[1]+" "+c.String()]
			if c.Beat == time.Second && fixed.Extensions > 0 && adaptive.Extensions >= fixed.Extensions {
				t.Errorf("%v: %s costs %d extensions, %s %d: want the adaptive one cheaper for handlers that beat often", c, pair[0], adaptive.Extensions, pair[1], fixed.Extensions)
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
		for _, c := range Cases() {
			r := results[s.Name+" "+c.String()]
			limit := int64(r.N) * int64(c.Job/max(interval(s), c.Beat)+2)
			if r.Extensions > limit {
				t.Errorf("%s, %v: %d extensions of %d messages, want at most %d (one per look that finds a beat)", s.Name, c, r.Extensions, r.N, limit)
			}
			if s.Config.Visibility.Extension == 0 && c.Job < vt && r.Extensions != 0 {
				t.Errorf("%s, %v: %d extensions of jobs shorter than the visibility timeout, want 0", s.Name, c, r.Extensions)
			}
		}
	}
}
