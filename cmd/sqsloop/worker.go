package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/alecthomas/kong"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/telemetry"
	"github.com/sqsloop/sqsloop/visibility"
)

// workerFlags are the flags of the commands that consume a queue (exec,
// http): the queue, and the consumer's settings.
type workerFlags struct {
	mailboxFlags `embed:""`

	Concurrency       int           `default:"1" help:"Messages handled at once, 1-${max_concurrency}."`
	VisibilityTimeout time.Duration `placeholder:"DURATION" help:"Lease of each received message, 1s-12h; 0 (the default): the queue's own visibility timeout (create-queue --visibility-timeout sets it). While the handler beats, the lease is extended (by this at first, then by a length chosen from the gaps between its beats); a handler that stops beating loses its message when the last extension runs out."`
	WaitTime          time.Duration `default:"20s" help:"Long poll of each receive, 1s-20s."`
	ShutdownTimeout   time.Duration `default:"${shutdown_timeout}" help:"Drain budget: on SIGTERM or SIGINT, receiving stops and handlers in flight get this long to finish before they are stopped and their messages given back (a second signal gives them back at once and exits)."`
	ExitWhenIdle      time.Duration `placeholder:"DURATION" help:"Exit (status 0) once the queue has been empty, with nothing in flight, for this long: for batch runs. The long poll in flight is cut short, so the exit comes within this and a round trip (at most 250 ms) of the last ack. 0: never."`
	MetricsAddr       string        `placeholder:"HOST:PORT" help:"Serve Prometheus metrics (/metrics), the health probes (/livez, /readyz), the lease page (/debug/sqsloop) and drain mode (POST /drain, /resume; from this host only) on this address. Empty: none."`
}

// workerVars are the values the worker flags' tags name (kong.Vars): the
// consumer's own default and limit, written once there.
func workerVars() kong.Vars {
	return kong.Vars{
		"shutdown_timeout": consumer.DefaultShutdownTimeout.String(),
		"max_concurrency":  strconv.Itoa(consumer.MaxConcurrency),
	}
}

// check checks the worker flags: those the consumer reads as its default
// when zero (--concurrency 0 would run 10 handlers) must not be, and the
// rest are the consumer's to check (consumer.Config.Validate).
func (w workerFlags) check() error {
	var errs []error
	if w.Concurrency < 1 || w.Concurrency > consumer.MaxConcurrency {
		errs = append(errs, fmt.Errorf("--concurrency: want 1-%d, got %d", consumer.MaxConcurrency, w.Concurrency))
	}
	if w.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--shutdown-timeout: want more than 0, got %v", w.ShutdownTimeout))
	}
	return errors.Join(errs...)
}

// handlerRun is what a worker command gives workerFlags.run: its handler,
// and what to do when the process exits at once.
type handlerRun struct {
	// handle is the consumer's handler.
	handle sqsloop.Handler
	// interrupted, if set, runs on a second signal, before the process
	// exits at once: it stops what the handlers started.
	interrupted func()
	// loops serve the handlers, by name: stopped last, once the consumer
	// has returned.
	loops map[string]lifecycle.Runnable
}

// run consumes the queue the flags name with the handler build makes for
// it, until a signal drains it, --exit-when-idle ends it, or the queue
// fails for good. name is the command's, for logs. It returns nil after a
// clean drain or an idle exit.
func (w workerFlags) run(g *globals, name string, build func(q *queue) (handlerRun, error)) error {
	ctx := g.ctx
	q, err := w.open(ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	h, err := build(q)
	if err != nil {
		if ctx.Err() != nil {
			g.log.Info("sqsloop: stopped by a signal before consuming", "command", name)
			return nil // nothing received: a clean stop
		}
		return err
	}

	group := &lifecycle.LoopGroup{
		Logger: g.log,
		Exit: func(code int) {
			if h.interrupted != nil {
				h.interrupted()
			}
			g.exit(code)
		},
	}
	var observer sqsloop.Observer
	if w.MetricsAddr != "" {
		tel, err := telemetry.Start(group, telemetry.Config{Addr: w.MetricsAddr, Queue: q.name, QueueURL: q.url, Title: "sqsloop " + name + ": " + q.name})
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		observer = tel.Observer()
		g.log.Info("sqsloop: serving "+tel.String(), "command", name)
	}
	c, err := consumer.New(q.mb, h.handle, consumer.Config{
		Concurrency:       w.Concurrency,
		VisibilityTimeout: w.VisibilityTimeout,
		WaitTime:          w.WaitTime,
		Visibility:        visibility.Config{CancelOnLeaseLost: true},
		ShutdownTimeout:   w.ShutdownTimeout,
		ExitWhenIdle:      w.ExitWhenIdle,
		Logger:            g.log,
		Observer:          observer,
	})
	if err != nil {
		return err
	}
	if err := group.Add("consumer", c); err != nil {
		return err
	}
	for name, l := range h.loops {
		if err := group.Add(name, l, lifecycle.LoopOption{Last: true}); err != nil {
			return err
		}
	}
	g.log.Info("sqsloop: consuming "+q.describe(), "command", name, "concurrency", w.Concurrency)
	err = group.Run(ctx)
	st := c.Stats()
	stopped := []any{"command", name, "received", st.Received, "succeeded", st.Succeeded, "failed", st.Failed,
		"poisoned", st.Poisoned, "leases_lost", st.LeasesLost}
	if n, ok := deadLetters(context.WithoutCancel(ctx), q); ok {
		stopped = append(stopped, "dead_letter_queue", n)
	}
	g.log.Info("sqsloop: stopped", stopped...)
	return err
}

// stopReadTimeout bounds the read of the dead-letter queue's depth for the
// stop line.
const stopReadTimeout = 5 * time.Second

// deadLetters returns the visible messages of q's dead-letter queue (on
// SQS approximate), and whether it has one that could be read: the stop
// line's count of what sits there, poisoned by this run (at once) or moved
// by the redrive policy (after maxReceiveCount receives) or earlier.
func deadLetters(ctx context.Context, q *queue) (int, bool) {
	ctx, cancel := context.WithTimeout(ctx, stopReadTimeout)
	defer cancel()
	_, a, err := deadLetterStats(ctx, q)
	return a.ApproximateMessages, err == nil
}
