package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

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
	left       depth // the queue after the run: messages not deleted
	note       string
	err        error
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

	var m wire.Meter
	client, err := e.client(ctx, &m, sc.latency)
	if err != nil {
		r.err = err
		return r
	}
	tr := newTracker(sc.messages)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: o.logLevel})).With("run", fmt.Sprintf("%s/%s/%d", sc.name, im.name, rep))
	j := job{client: client, url: url, sc: sc, tr: tr, log: log}
	runCtx, cancel := context.WithTimeout(ctx, sc.timeout)
	defer cancel()

	stopProfile := startProfile(o, sc, im, rep)
	runtime.GC() // leave the preload's garbage out of the window
	srv0, _ := childCPU()
	cpu0, t0 := cpuTime(), time.Now()
	r.note, r.err = im.consume(runCtx, j)
	r.wall, r.cpu = time.Since(t0), cpuTime()-cpu0
	r.allHandled = tr.doneSince(t0)
	srv1, ok := childCPU()
	r.serverCPU, r.hasServerCPU = srv1-srv0, ok
	stopProfile()

	s := m.Snapshot()
	r.requests, r.countCheck, r.retries = s.Wire, s.Check(), s.Retries()
	r.handled, r.distinct, r.duplicates = tr.counts()
	r.unknown = tr.unknown.Load()
	r.left, err = settledDepth(context.WithoutCancel(ctx), e.admin, url, o.settle)
	if err != nil && r.err == nil {
		r.err = err
	}
	return r
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
	s := fmt.Sprintf("%-8s %-8s rep %d: %7.2fs (all handled at %.2fs) %8.0f msg/s  req/msg %.3f  cpu %6.0fµs/msg (server %6.0f)  dup %d  left %+v  requests %v",
		r.scenario, r.impl, r.rep, r.wall.Seconds(), r.allHandled.Seconds(), r.msgsPerSec(), r.reqPerMsg(), r.cpuPerMsg(), r.serverCPUPerMsg(), r.duplicates, r.left, map[string]int64(r.requests))
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
