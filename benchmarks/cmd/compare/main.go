package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run() error {
	reps := flag.Int("reps", 3, "repetitions of each scenario (medians are reported); ≥ 1")
	longReps := flag.Int("long-reps", 3, "repetitions of the scenarios of jobs of seconds (slow, two-workers), at most -reps; ≥ 1")
	list := flag.String("scenarios", "fast,fast-20k,fast-rtt10ms,slow,two-workers", "comma-separated scenarios to run: fast, fast-20k, fast-rtt10ms, slow, two-workers")
	implList := flag.String("impls", "sqsloop,naive,gocloud,gocloud-wait20", "comma-separated implementations: the first repetition runs them in this order, each later one starts one further along")
	drain := flag.Bool("drain", true, "measure sqsloop's drain after the scenarios")
	drainReps := flag.Int("drain-reps", 5, "repetitions of each drain case")
	warmup := flag.Bool("warmup", true, "run each implementation once on 200 messages, unreported, before measuring")
	slowInterval := flag.Duration("slow-interval", time.Second, "extension interval in the slow scenario (at most half the 2 s visibility timeout, under half the 3 s extension)")
	slowConc := flag.Int("slow-concurrency", 16, "handlers at once in the slow scenario, and in each worker of two-workers")
	fastConc := flag.Int("fast-concurrency", 16, "handlers at once in the fast scenarios (fast, fast-20k, fast-rtt10ms)")
	dir := flag.String("integration-dir", "../integration", "package integration's directory (fauxqs.mjs and node_modules)")
	settle := flag.Duration("settle", 0, "how long to let the queue's approximate counts settle before counting undeleted messages (0 for fauxqs; about 60s on Amazon SQS)")
	profDir := flag.String("cpuprofile", "", "directory to write a CPU profile of each run's measured window into (one file per run)")
	profImpls := flag.String("profile-impls", "sqsloop", "comma-separated implementations to profile with -cpuprofile")
	verbose := flag.Bool("v", false, "log the consumers' INFO records (default: WARN and above)")
	flag.Parse()
	if *reps < 1 || *longReps < 1 || *drainReps < 0 || *slowConc < 1 || *fastConc < 1 || *slowInterval <= 0 {
		return fmt.Errorf("-reps and -long-reps must be ≥ 1, -drain-reps ≥ 0, -slow-concurrency and -fast-concurrency ≥ 1, and -slow-interval > 0")
	}
	scs, err := pick("scenarios", scenarios(*slowInterval, *slowConc, *fastConc), func(s scenario) string { return s.name }, *list)
	if err != nil {
		return err
	}
	ims, err := pick("impls", impls(), func(im impl) string { return im.name }, *implList)
	if err != nil {
		return err
	}
	o := options{settle: *settle, profileDir: *profDir, profileFor: map[string]bool{}, logLevel: slog.LevelWarn}
	if *verbose {
		o.logLevel = slog.LevelInfo
	}
	for name := range strings.SplitSeq(*profImpls, ",") {
		o.profileFor[strings.TrimSpace(name)] = true
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	e, err := newEnv(ctx, *dir, logf)
	if err != nil {
		return err
	}
	defer func() { _ = e.close() }()
	logf("server: %s at %s; GOMAXPROCS %d; %s", e.server.Kind, e.server.Endpoint, runtime.GOMAXPROCS(0), runtime.Version())

	if *warmup {
		w := scs[0]
		w.name, w.messages, w.work = "warmup", 200, 0
		for _, im := range ims {
			r := runOnce(ctx, e, w, im, 0, options{settle: 0, logLevel: o.logLevel})
			logf("%s", r.logLine())
		}
	}
	var results []result
	for _, sc := range scs {
		n := *reps
		if sc.long {
			n = min(n, *longReps)
		}
		for rep := 1; rep <= n; rep++ {
			for _, im := range rotate(ims, rep-1) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r := runOnce(ctx, e, sc, im, rep, o)
				logf("%s", r.logLine())
				results = append(results, r)
			}
		}
	}
	var drains []drainResult
	if *drain {
		for rep := 1; rep <= *drainReps; rep++ {
			for _, c := range drainCases() {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r := measureDrain(ctx, e, c, rep, o.logLevel)
				logf("%s", r.logLine())
				drains = append(drains, r)
			}
		}
	}

	fmt.Printf("Server: %s. Medians of the runs of each row; duplicates and undeleted show the maximum too when it differs.\n\n", e.server.Kind)
	writeTable(os.Stdout, results)
	var sb strings.Builder
	writeWorkersTable(&sb, results)
	if sb.Len() > 0 {
		fmt.Printf("\nTwo workers on one queue (buffer wait: how long a job sat at its worker, after the receive that brought it returned and before its handler started, while the other worker had a free handler slot):\n\n%s", sb.String())
	}
	if len(drains) > 0 {
		fmt.Println()
		writeDrainTable(os.Stdout, drains)
	}
	for _, r := range results {
		if r.err != nil || r.countCheck != nil {
			return fmt.Errorf("some runs failed or miscounted (see the log above)")
		}
	}
	return nil
}

// pick returns the items of all named in the comma-separated list (the
// value of -flagName), in the list's order, or an error naming an unknown one
// or saying that the list names none.
func pick[T any](flagName string, all []T, name func(T) string, list string) ([]T, error) {
	var out []T
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i := slices.IndexFunc(all, func(x T) bool { return name(x) == n })
		if i < 0 {
			names := make([]string, len(all))
			for j, x := range all {
				names[j] = name(x)
			}
			return nil, fmt.Errorf("-%s: unknown name %q (have %s)", flagName, n, strings.Join(names, ", "))
		}
		out = append(out, all[i])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-%s: %q names none", flagName, list)
	}
	return out, nil
}

// rotate returns xs started k places in, wrapping around: the order of the
// implementations in repetition k+1, so that none always runs first or
// always right after the same other (whose garbage, in the server and in
// this process, it would meet).
func rotate[T any](xs []T, k int) []T {
	if len(xs) == 0 {
		return nil
	}
	k %= len(xs)
	return append(slices.Clone(xs[k:]), xs[:k]...)
}
