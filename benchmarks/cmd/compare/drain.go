package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/benchmarks/stats"
	"github.com/sqsloop/sqsloop/benchmarks/wire"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/sqsmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// drainCase is one way to catch sqsloop mid-work and shut it down.
type drainCase struct {
	name        string
	messages    int
	concurrency int
	work        time.Duration // each handler's run, beating every 100 ms
	// shutdownAt is how many handlers must have started before Shutdown.
	shutdownAt int64
	// rtt is the emulated round trip of the consumer's requests (0: none).
	rtt time.Duration
	// midReceive times Shutdown for when a ReceiveMessage has reached the
	// server and its answer is on the way back (a quarter of rtt after it
	// was sent); otherwise Shutdown lands at a random moment.
	midReceive bool
}

func drainCases() []drainCase {
	return []drainCase{
		// Every handler slot busy with a long job, the rest of the queue
		// waiting: the consumer has received only what it can run.
		{name: "busy", messages: 50, concurrency: 10, work: 2 * time.Second, shutdownAt: 10},
		// Short jobs, receives going on all the time: Shutdown lands while a
		// receive may be under way.
		{name: "flowing", messages: 300, concurrency: 10, work: 20 * time.Millisecond, shutdownAt: 100},
		// As flowing, with a 10 ms round trip, and Shutdown timed to land
		// while a receive's answer is on its way back.
		{name: "mid-receive", messages: 300, concurrency: 10, work: 20 * time.Millisecond, shutdownAt: 100,
			rtt: 10 * time.Millisecond, midReceive: true},
	}
}

// drainResult is one drain measurement.
type drainResult struct {
	c               drainCase
	rep             int
	started         int64         // handlers started, in all
	startedAtSignal int64         // handlers started when Shutdown was called
	expected        int           // visible messages once every unstarted one is back: messages - started
	atSignal        int           // visible when Shutdown was called (last poll before it)
	reached         time.Duration // from Shutdown until the polls see expected visible, and keep seeing it; <0: never
	poll            time.Duration // median time between polls (the resolution)
	shutdown        time.Duration // how long Shutdown took (in-flight handlers finishing)
	final           depth
	stats           consumer.Stats
	err             error
}

// drainCap bounds how long after Shutdown the queue is watched.
const drainCap = 10 * time.Second

// measureDrain runs sqsloop on a fresh queue, calls Shutdown once
// c.shutdownAt handlers have started, and polls the queue's visible count
// (GetQueueAttributes, from a client of its own) until every message not
// started is visible again.
func measureDrain(ctx context.Context, e *env, c drainCase, rep int, logLevel slog.Level) (r drainResult) {
	r = drainResult{c: c, rep: rep, reached: -1}
	url, err := createQueue(ctx, e.admin, queueName("drain", c.name, strconv.Itoa(rep)), 30*time.Second)
	if err != nil {
		r.err = err
		return r
	}
	defer func() { _ = deleteQueue(context.WithoutCancel(ctx), e.admin, url) }()
	if err := preload(ctx, e.admin, url, c.messages); err != nil {
		r.err = err
		return r
	}
	receiveSent := make(chan struct{}, 1)
	var armed atomic.Bool
	client, err := e.clientWith(ctx, nil, wire.WithLatency(c.rtt, func(action string) {
		if action == wire.ReceiveMessage && armed.CompareAndSwap(true, false) {
			receiveSent <- struct{}{}
		}
	}))
	if err != nil {
		r.err = err
		return r
	}
	watcher, err := e.client(ctx, nil, 0)
	if err != nil {
		r.err = err
		return r
	}
	mb, err := sqsmailbox.New(client, url)
	if err != nil {
		r.err = err
		return r
	}
	defer mb.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel})).With("run", "drain/"+c.name)
	cons, err := consumer.New(mb, func(ctx context.Context, m *sqsloop.Message) error {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		end := time.After(c.work)
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-end:
				return nil
			case <-t.C:
				heartbeat.Beat(ctx)
			}
		}
	}, consumer.Config{
		Concurrency: c.concurrency, VisibilityTimeout: 30 * time.Second,
		Visibility:      visibility.Config{Interval: 10 * time.Second, Extension: 30 * time.Second},
		ShutdownTimeout: 20 * time.Second, Logger: log,
	})
	if err != nil {
		r.err = err
		return r
	}

	// Poll the queue from before the signal until the watch ends.
	type sample struct {
		at time.Time
		d  depth
	}
	var mu sync.Mutex
	var samples []sample
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	watchDone := make(chan struct{})
	startWatch := func() {
		go func() {
			defer close(watchDone)
			for watchCtx.Err() == nil {
				d, err := queueDepth(watchCtx, watcher, url)
				if err != nil {
					continue
				}
				mu.Lock()
				samples = append(samples, sample{at: time.Now(), d: d})
				mu.Unlock()
			}
		}()
	}

	runErr := make(chan error, 1)
	go func() { runErr <- cons.Run(context.WithoutCancel(ctx)) }()
	waitCtx, cancelWait := context.WithTimeout(ctx, 30*time.Second)
	defer cancelWait()
	for cons.Stats().Started < c.shutdownAt && waitCtx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	startWatch()
	// A few polls before the signal, and a signal at a random moment of the
	// consumer's cycle (receive, handle, ack), not in step with it.
	time.Sleep(10*time.Millisecond + rand.N(40*time.Millisecond))
	if c.midReceive {
		armed.Store(true)
		select {
		case <-receiveSent:
			time.Sleep(c.rtt / 4)
		case <-time.After(5 * time.Second):
			r.err = errors.New("no receive went out within 5 s")
		}
	}
	mu.Lock()
	if len(samples) > 0 {
		r.atSignal = samples[len(samples)-1].d.visible
	}
	mu.Unlock()

	r.startedAtSignal = cons.Stats().Started
	t0 := time.Now()
	shutErr := cons.Shutdown(context.WithoutCancel(ctx))
	r.shutdown = time.Since(t0)
	err = <-runErr
	time.Sleep(200 * time.Millisecond) // let the last polls land
	stopWatch()
	<-watchDone
	r.err = errors.Join(r.err, waitCtx.Err(), shutErr, err)
	r.stats = cons.Stats()
	r.started = r.stats.Started
	r.expected = c.messages - int(r.started)

	var gaps []float64
	for i, s := range samples {
		if i > 0 {
			gaps = append(gaps, float64(s.at.Sub(samples[i-1].at)))
		}
		if s.at.Before(t0) || s.at.Sub(t0) > drainCap {
			continue
		}
		// Reached: from this poll on, every poll sees them all visible.
		if s.d.visible >= r.expected {
			if r.reached < 0 {
				r.reached = s.at.Sub(t0)
			}
		} else {
			r.reached = -1
		}
	}
	r.poll = time.Duration(stats.Median(gaps))
	r.final, err = settledDepth(context.WithoutCancel(ctx), e.admin, url, 0)
	if err != nil && r.err == nil {
		r.err = err
	}
	return r
}

func (r drainResult) logLine() string {
	reached := "never (within " + drainCap.String() + ")"
	if r.reached >= 0 {
		reached = r.reached.Round(time.Millisecond).String()
	}
	s := fmt.Sprintf("drain %-8s rep %d: started %d→%d, visible at signal %d, expected %d; unstarted visible after %s (poll every %s); Shutdown took %s; received %d, givenBack %d; final %+v",
		r.c.name, r.rep, r.startedAtSignal, r.started, r.atSignal, r.expected, reached, r.poll.Round(100*time.Microsecond), r.shutdown.Round(time.Millisecond),
		r.stats.Received, r.stats.GivenBack, r.final)
	if r.err != nil {
		s += "  ERROR: " + r.err.Error()
	}
	return s
}

// writeDrainTable writes the drain measurements as a markdown table, one
// row per case, medians over the repetitions.
func writeDrainTable(w io.Writer, rs []drainResult) {
	fmt.Fprintln(w, "| drain case | runs | started at signal → in all | visible at signal / expected | unstarted visible again after (median, max) | poll resolution | Shutdown returned after | given back (sum) | hidden after Run returned, never received (max) |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, c := range drainCases() {
		var mine []drainResult
		for _, r := range rs {
			if r.c.name == c.name {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			continue
		}
		var reached, polls, shut []float64
		never, inFlight, givenBack := 0, 0, int64(0)
		started, atSignal := "", ""
		for i, r := range mine {
			if r.reached < 0 {
				never++
			} else {
				reached = append(reached, float64(r.reached))
			}
			polls = append(polls, float64(r.poll))
			shut = append(shut, float64(r.shutdown))
			inFlight = max(inFlight, r.final.inFlight)
			givenBack += r.stats.GivenBack
			sep := ""
			if i > 0 {
				sep = ", "
			}
			started += sep + fmt.Sprintf("%d→%d", r.startedAtSignal, r.started)
			atSignal += sep + fmt.Sprintf("%d/%d", r.atSignal, r.expected)
		}
		reach := "never"
		if len(reached) > 0 {
			mx := 0.0
			for _, x := range reached {
				mx = max(mx, x)
			}
			reach = fmt.Sprintf("%s, %s", time.Duration(stats.Median(reached)).Round(time.Millisecond), time.Duration(mx).Round(time.Millisecond))
			if never > 0 {
				reach += fmt.Sprintf(" (%d runs never)", never)
			}
		}
		rtt := ""
		if c.rtt > 0 {
			rtt = fmt.Sprintf(", %s round trip", c.rtt)
		}
		fmt.Fprintf(w, "| %s (%d msgs, %d handlers of %s%s) | %d | %s | %s | %s | %s | %s | %d | %d |\n",
			c.name, c.messages, c.concurrency, c.work, rtt, len(mine), started, atSignal, reach,
			time.Duration(stats.Median(polls)).Round(100*time.Microsecond), time.Duration(stats.Median(shut)).Round(time.Millisecond), givenBack, inFlight)
	}
}
