package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/visibility"
)

// options are the worker's flags.
type options struct {
	dir         string
	slow        time.Duration
	chunks      int
	concurrency int
	progress    time.Duration
	queueURL    string // empty: the embedded in-memory queue, or with endpoint the queue set up there
	endpoint    string // SQS-compatible server; empty: AWS
	queue       string // with endpoint and no queueURL: the queue to set up (and its DLQ)
	send        bool   // enqueue the jobs into queueURL first
	metricsAddr string // serve metrics, probes and the lease page here; empty: not at all
	trace       string // "stdout": print spans; empty: none
	mailbox     string // sqlite:PATH or postgres://…: a database (sqlqueue.go); empty: memory or SQS
}

// lease is the visibility timeout the worker receives with, short so that
// extensions visibly happen.
const lease = 2 * time.Second

// open returns the queue o names: in memory, the queue at -queue-url, or
// the one -queue names set up on -endpoint.
func open(ctx context.Context, o options) (*queue, error) {
	if o.mailbox != "" {
		return newSQLQueue(ctx, o.mailbox)
	}
	if o.queueURL == "" && o.endpoint == "" {
		return newMemQueue(ctx)
	}
	return newSQSQueue(ctx, o.endpoint, o.queueURL, o.queue)
}

// run enqueues the jobs (in memory and on a queue it set up always, with
// -send on -queue-url), consumes in group until the queue is drained or the
// group shuts down (a signal, ctx done), and returns the summary; its ran
// is false when it failed before consuming.
func run(ctx context.Context, o options, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) (summary, error) {
	began := time.Now()
	sum := summary{}
	q, err := open(ctx, o)
	if err != nil {
		return sum, err
	}
	defer q.close()
	sum.maxReceives = q.atStart.MaxReceiveCount
	if n := waiting(q.atStart); o.mailbox != "" && n > 0 {
		// An earlier run was interrupted: finish its jobs, enqueue none.
		sum.waiting = n
		fmt.Fprintf(out, "found %d jobs waiting in %s from an earlier run: finishing them\n", n, database(o.mailbox))
	} else if o.queueURL == "" || o.send {
		files, err := listFiles(o.dir)
		if err != nil {
			return sum, err
		}
		if _, err := enqueue(ctx, q.mb, files); err != nil {
			return sum, err
		}
		sum.enqueued, sum.files = true, len(files)
		fmt.Fprintf(out, "enqueued %d jobs (%d files, 1 stuck, 1 failing, 1 malformed)\n", len(files)+3, len(files))
	}

	group.Logger = log // the shutdown's timeline at INFO stays out of the worker's output; WARN (a budget spent) shows
	tel, err := startTelemetry(o, q.url, group, out)
	if err != nil {
		return sum, err
	}
	defer tel.close()
	if tel.server != nil {
		fmt.Fprintf(out, "serving http://%s%s, %s, %s and %s\n", tel.addr(), metricsPath, leasesPath, lifecycle.LivezPath, lifecycle.ReadyzPath)
		if err := group.Add("telemetry", tel.loop(), lifecycle.LoopOption{Last: true}); err != nil {
			return sum, err
		}
	}

	h := &hasher{slow: o.slow, chunks: o.chunks}
	poison := &poisonLog{}
	c, err := consumer.New(q.mb, consumer.JSONHandler(h.handle), consumer.Config{
		Concurrency:       o.concurrency,
		VisibilityTimeout: lease,
		WaitTime:          time.Second,
		Visibility: visibility.Config{
			Interval:          lease / 4,
			Extension:         lease,
			CancelOnLeaseLost: true,
		},
		Backoff:         consumer.ExponentialBackoff(200*time.Millisecond, time.Second),
		ShutdownTimeout: 10 * time.Second,
		Middleware:      []consumer.Middleware{poison.middleware},
		Logger:          log,
		Observer:        tel.observer,
	})
	if err != nil {
		return sum, err
	}
	mon := &monitor{q: q, c: c, every: o.progress, out: out, began: began, log: log}
	if sum.enqueued {
		mon.total = sum.files + 3
	}
	if err := group.Add("consumer", c); err != nil {
		return sum, err
	}
	if err := group.Add("monitor", mon); err != nil {
		return sum, err
	}
	sum.ran = true
	err = group.Run(ctx)
	dead, derr := q.deadLettered(context.WithoutCancel(ctx))
	if derr != nil {
		log.Warn("worker: could not count the dead-letter queue", "error", derr)
	}
	sum.st, sum.bytes, sum.wall, sum.drained = c.Stats(), h.bytes.Load(), time.Since(began), mon.drained
	sum.deadLettered, sum.poisonCounts = dead-int(sum.st.Poisoned), poison.receiveCounts()
	if q.exact { // what the drain must leave at 0
		a, err := q.mb.QueueAttributes(context.WithoutCancel(ctx))
		if err != nil {
			log.Warn("worker: could not count the messages in flight", "error", err)
		}
		sum.leftInFlight = a.ApproximateMessagesInFlight
	}
	return sum, err
}

// monitor prints progress and ends the run once the queue is drained.
type monitor struct {
	q       *queue
	c       *consumer.Consumer
	every   time.Duration
	out     io.Writer
	began   time.Time
	total   int // jobs enqueued by this run; 0: none (-queue-url without -send)
	log     *slog.Logger
	drained bool
}

// Run polls the queue's backlog (every 100 ms in memory, every second on
// SQS, whose counts are approximate and must read 0 twice in a row); it
// returns nil once the queue is drained (the group then shuts the consumer
// down), or when ctx is done.
func (m *monitor) Run(ctx context.Context) error {
	period, need := 100*time.Millisecond, 1
	if !m.q.exact {
		period, need = time.Second, 2
	}
	poll := time.NewTicker(period)
	defer poll.Stop()
	next := time.Now().Add(m.every)
	empty := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
		}
		if m.every > 0 && !time.Now().Before(next) {
			m.print(ctx)
			next = next.Add(m.every)
		}
		n, err := m.q.backlog(ctx)
		if err != nil {
			m.log.Warn("worker: could not read the queue's backlog", "error", err)
			continue
		}
		if n > 0 {
			empty = 0
			continue
		}
		if empty++; empty >= need {
			m.drained = true
			return nil
		}
	}
}

func (m *monitor) print(ctx context.Context) {
	st := m.c.Stats()
	dead, _ := m.q.deadLettered(ctx)
	acked := fmt.Sprint(st.Acked)
	if m.total > 0 {
		acked += fmt.Sprint("/", m.total)
	}
	fmt.Fprintf(m.out, "[%5.1fs] acked %s  failed %d  extensions %d in %d calls  leases lost %d  redelivered %d  dead-lettered %d  poison %d\n",
		time.Since(m.began).Seconds(), acked, st.Failed, st.Extensions, st.ExtensionCalls,
		st.LeasesLost, st.Redelivered, dead-int(st.Poisoned), st.Poisoned)
}
