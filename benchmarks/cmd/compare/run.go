package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop/benchmarks/cputime"
	"github.com/sqsloop/sqsloop/benchmarks/wire"
)

// result is what one run of one implementation on one scenario measured.
type result struct {
	scenario, impl string
	rep            int
	messages       int
	wall, cpu      time.Duration
	// allHandled is when every message had been handled once, from the
	// window's start; wall also covers stopping (flushing acks, waiting for
	// handlers still running, duplicates included).
	allHandled time.Duration
	// serverCPU is the server process's CPU time in the window, when it is
	// our child (fauxqs); hasServerCPU says whether it is.
	serverCPU    time.Duration
	hasServerCPU bool
	// requests are the consumer's requests by action, counted on the wire.
	requests wire.Counts
	// countCheck is non-nil when the wire and SDK counts disagree.
	countCheck error
	retries    int64
	handled    int64 // handler runs, duplicates included
	distinct   int64 // distinct messages handled
	duplicates int64 // handler runs beyond the first of a message
	unknown    int64 // messages whose body was not one we sent
	// maxReceiveCount is the largest ApproximateReceiveCount a handler saw.
	maxReceiveCount int64
	// workers is what the timeline of a scenario of several workers shows
	// (nil for one worker).
	workers *workerStats
	left    depth // the queue after the run: messages not deleted
	note    string
	err     error
}

func (r result) msgsPerSec() float64 { return float64(r.messages) / r.wall.Seconds() }
func (r result) reqPerMsg() float64  { return float64(r.requests.Total()) / float64(r.messages) }
func (r result) cpuPerMsg() float64 {
	return float64(r.cpu.Microseconds()) / float64(r.messages)
}
func (r result) serverCPUPerMsg() float64 {
	return float64(r.serverCPU.Microseconds()) / float64(r.messages)
}

// options are the command's settings that shape a run.
type options struct {
	settle     time.Duration // how long to let the queue's counts settle after a run
	profileDir string        // where CPU profiles go ("" for none)
	profileFor map[string]bool
	logLevel   slog.Level
}

// runOnce creates a fresh queue, preloads it (not measured), lets im
// consume every message with a counted client, and measures the window
// from the consumer's start until it has stopped.
func runOnce(ctx context.Context, e *env, sc scenario, im impl, rep int, o options) (r result) {
	r = result{scenario: sc.name, impl: im.name, rep: rep, messages: sc.messages}
	url, err := createQueue(ctx, e.admin, queueName(sc.name, im.name, strconv.Itoa(rep)), sc.visibility)
	if err != nil {
		r.err = err
		return r
	}
	defer func() {
		if err := deleteQueue(context.WithoutCancel(ctx), e.admin, url); err != nil && r.err == nil {
			r.err = err
		}
	}()
	if err := preload(ctx, e.admin, url, sc.messages); err != nil {
		r.err = err
		return r
	}
	if d, err := queueDepth(ctx, e.admin, url); err != nil || d.visible != sc.messages {
		r.err = fmt.Errorf("after preload: %+v, %v; want %d visible", d, err, sc.messages)
		return r
	}

	// One meter for every worker's client: the requests are counted
	// together, each client keeping its own connections.
	var m wire.Meter
	tr := newTracker(sc.messages)
	var arr *arrivals
	if sc.workerCount() > 1 {
		arr = newArrivals()
		tr.tl = newTimeline(sc.workerCount(), arr)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: o.logLevel})).With("run", fmt.Sprintf("%s/%s/%d", sc.name, im.name, rep))
	jobs := make([]job, sc.workerCount())
	for w := range jobs {
		opts := []func(*sqs.Options){wire.WithLatency(sc.latency, nil)}
		if arr != nil {
			opts = append(opts, arr.option())
		}
		client, err := e.clientWith(ctx, &m, opts...)
		if err != nil {
			r.err = err
			return r
		}
		jobs[w] = job{client: client, url: url, sc: sc, tr: tr, log: log, worker: w}
		if len(jobs) > 1 {
			jobs[w].log = log.With("worker", workerName(w))
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, sc.timeout)
	defer cancel()

	stopProfile := startProfile(o, sc, im, rep)
	runtime.GC() // leave the preload's garbage out of the window
	srv0, _ := cputime.Children(os.Getpid())
	cpu0, t0 := cputime.Self(), time.Now()
	r.note, r.err = consumeAll(runCtx, im, jobs)
	r.wall, r.cpu = time.Since(t0), cputime.Self()-cpu0
	r.allHandled = tr.doneSince(t0)
	srv1, ok := cputime.Children(os.Getpid())
	r.serverCPU, r.hasServerCPU = srv1-srv0, ok
	stopProfile()

	s := m.Snapshot()
	r.requests, r.countCheck, r.retries = s.Wire, s.Check(), s.Retries()
	r.handled, r.distinct, r.duplicates = tr.counts()
	r.unknown = tr.unknown.Load()
	r.maxReceiveCount = tr.maxReceiveCount.Load()
	if tr.tl != nil {
		st := tr.tl.stats(sc.concurrency, tr.doneTime())
		r.workers = &st
		if st.noArrival > 0 && r.err == nil {
			r.err = fmt.Errorf("%d handler runs of messages whose receive was not seen", st.noArrival)
		}
	}
	r.left, err = settledDepth(context.WithoutCancel(ctx), e.admin, url, o.settle)
	if err != nil && r.err == nil {
		r.err = err
	}
	return r
}

// consumeAll runs im's consume for every job at once (one per worker) and
// returns their notes and errors, each named by its worker when there are
// several.
func consumeAll(ctx context.Context, im impl, jobs []job) (string, error) {
	if len(jobs) == 1 {
		return im.consume(ctx, jobs[0])
	}
	notes := make([]string, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for w, j := range jobs {
		wg.Go(func() { notes[w], errs[w] = im.consume(ctx, j) })
	}
	wg.Wait()
	var note []string
	for w := range jobs {
		if notes[w] != "" {
			note = append(note, workerName(w)+": "+notes[w])
		}
		if errs[w] != nil {
			errs[w] = fmt.Errorf("worker %s: %w", workerName(w), errs[w])
		}
	}
	return strings.Join(note, "; "), errors.Join(errs...)
}

// workerName names worker w: A, B, ….
func workerName(w int) string { return string(rune('A' + w)) }

// spread formats handler runs per worker as "A/B": "24/16".
func spread(handled []int) string {
	parts := make([]string, len(handled))
	for w, n := range handled {
		parts[w] = strconv.Itoa(n)
	}
	return strings.Join(parts, "/")
}

// startProfile starts a CPU profile of this run's window when asked for,
// and returns the function that stops it.
func startProfile(o options, sc scenario, im impl, rep int) func() {
	if o.profileDir == "" || !o.profileFor[im.name] {
		return func() {}
	}
	path := filepath.Join(o.profileDir, fmt.Sprintf("%s-%s-%d.pprof", sc.name, im.name, rep))
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// logLine describes one run for the progress log.
func (r result) logLine() string {
	s := fmt.Sprintf("%-12s %-14s rep %d: %7.2fs (all handled at %.2fs) %8.0f msg/s  req/msg %.3f  cpu %6.0fµs/msg (server %6.0f)  dup %d  left %+v  requests %v",
		r.scenario, r.impl, r.rep, r.wall.Seconds(), r.allHandled.Seconds(), r.msgsPerSec(), r.reqPerMsg(), r.cpuPerMsg(), r.serverCPUPerMsg(), r.duplicates, r.left, map[string]int64(r.requests))
	if r.maxReceiveCount > 1 {
		s += fmt.Sprintf("  max receive count %d", r.maxReceiveCount)
	}
	if w := r.workers; w != nil {
		s += fmt.Sprintf("  handled by %s  buffer wait: largest %.3fs, sum %.3fs, %d > %v",
			spread(w.handled), w.largestWait.Seconds(), w.totalWait.Seconds(), w.waitedLong, roundTripBound)
	}
	if r.retries != 0 {
		s += fmt.Sprintf("  retries %d", r.retries)
	}
	if r.unknown != 0 {
		s += fmt.Sprintf("  unknown bodies %d", r.unknown)
	}
	if r.countCheck != nil {
		s += "  COUNT MISMATCH: " + r.countCheck.Error()
	}
	if r.note != "" {
		s += "  [" + r.note + "]"
	}
	if r.err != nil {
		s += "  ERROR: " + r.err.Error()
	}
	return s
}
