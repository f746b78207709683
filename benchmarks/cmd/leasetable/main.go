// Command leasetable runs the lease table of package leaselength (issue 18,
// item 7) on an SQS-compatible server, in real time, for the cases and
// settings named, every one at once on a queue of its own, and prints the
// table. TestLeaseTable runs every case in virtual time on memmailbox; this
// checks a subset of it on the wire:
//
//	leasetable -endpoint http://127.0.0.1:4566 -jobs 10s,2m -beats 1s,30s -settings 'fixed 30s,adaptive'
//
// Credentials and region come from the standard AWS chain (any values do for
// a local server). A case of 2 min jobs takes about 7 minutes; 20 min jobs
// take hours.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/benchmarks/leaselength"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

func main() {
	endpoint := flag.String("endpoint", "", "SQS-compatible endpoint URL (empty: AWS)")
	jobs := flag.String("jobs", "10s,2m", "job durations, comma-separated")
	beats := flag.String("beats", "1s,30s", "beat periods, comma-separated")
	settings := flag.String("settings", "fixed 30s,adaptive", "settings of leaselength.Settings, by name, comma-separated")
	n := flag.Int("n", 10, "messages per wave")
	flag.Parse()
	if err := run(context.Background(), *endpoint, *jobs, *beats, *settings, *n); err != nil {
		fmt.Fprintln(os.Stderr, "leasetable:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, endpoint, jobs, beats, settings string, n int) error {
	var cases []leaselength.Case
	for _, j := range strings.Split(jobs, ",") {
		for _, b := range strings.Split(beats, ",") {
			job, err := time.ParseDuration(j)
			if err != nil {
				return fmt.Errorf("-jobs: %w", err)
			}
			beat, err := time.ParseDuration(b)
			if err != nil {
				return fmt.Errorf("-beats: %w", err)
			}
			cases = append(cases, leaselength.Case{Job: job, Beat: beat})
		}
	}
	want := strings.Split(settings, ",")
	var chosen []leaselength.Setting
	for _, s := range leaselength.Settings() {
		if slices.Contains(want, s.Name) {
			chosen = append(chosen, s)
		}
	}
	if len(chosen) != len(want) {
		return fmt.Errorf("-settings %q: want names among those of leaselength.Settings", settings)
	}
	client, err := sqsmailbox.NewClient(ctx, endpoint)
	if err != nil {
		return err
	}
	quiet := slog.New(slog.DiscardHandler)
	type job struct {
		i int
		s leaselength.Setting
		c leaselength.Case
	}
	var all []job
	for _, c := range cases {
		for _, s := range chosen {
			all = append(all, job{len(all), s, c})
		}
	}
	results := make([]leaselength.Result, len(all))
	errs := make([]error, len(all))
	stamp := time.Now().Format("150405")
	var wg sync.WaitGroup
	for _, j := range all {
		wg.Go(func() {
			name := fmt.Sprintf("leasetable-%s-%d", stamp, j.i)
			mb, err := sqsmailbox.CreateQueue(ctx, client, sqsloop.QueueSpec{Name: name, VisibilityTimeout: leaselength.QueueVisibilityTimeout})
			if err != nil {
				errs[j.i] = err
				return
			}
			began := time.Now()
			results[j.i], errs[j.i] = leaselength.Run(ctx, mb, j.s, j.c, n, quiet)
			fmt.Fprintf(os.Stderr, "%s, %v: done in %v\n", j.s.Name, j.c, time.Since(began).Round(time.Second))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s, %v: %w", all[i].s.Name, all[i].c, err)
		}
	}
	leaselength.WriteTable(os.Stdout, results)
	return nil
}
