package worker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/idempotency"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/visibility"
)

// Config is one run of the job.
type Config struct {
	Options
	// Queue is the queue the jobs go to and come from; the caller closes
	// it after Run.
	Queue *Queue
	// Enqueue makes Run enqueue the jobs of Dir first; otherwise it
	// consumes what the queue holds.
	Enqueue bool
	// Waiting is the number of jobs an earlier, interrupted run left in
	// the queue, for the summary; 0: none.
	Waiting int
	// Observer observes the consumer beside the lease page; nil: nothing
	// more.
	Observer sqsloop.Observer
	// State, when set, keeps the file jobs' checkpoints (saved every
	// chunk: a job delivered again resumes where it was) and the jobs'
	// idempotency records (a job done whose ack was lost is acked again,
	// not hashed again).
	State jobstate.Store
}

// Run enqueues the jobs (with c.Enqueue), serves the probes and the lease
// page (with c.MetricsAddr), and consumes in group until the queue is
// drained or the group shuts down (a signal, ctx done); it returns the
// summary, whose Ran is false when it failed before consuming.
func Run(ctx context.Context, c Config, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) (Summary, error) {
	began := time.Now()
	q := c.Queue
	sum := Summary{MaxReceives: q.atStart.MaxReceiveCount, Waiting: c.Waiting}
	if c.Enqueue {
		files, err := listFiles(c.Dir)
		if err != nil {
			return sum, err
		}
		if _, err := enqueue(ctx, q.mb, files); err != nil {
			return sum, err
		}
		sum.Enqueued, sum.Files = true, len(files)
		fmt.Fprintf(out, "enqueued %d jobs (%d files, 1 stuck, 1 failing, 1 malformed)\n", len(files)+3, len(files))
	}

	group.Logger = log // the shutdown's timeline at INFO stays out of the output; WARN (a budget spent) shows
	observer := c.Observer
	if c.MetricsAddr != "" {
		srv, err := serve(c, group)
		if err != nil {
			return sum, err
		}
		defer srv.listener.Close() // closed already once the group ran it
		fmt.Fprintf(out, "serving %s\n", srv)
		// Stopped last: the probes and the lease page answer through the
		// drain (/livez 200, /readyz 503) until the consumer and the
		// monitor have returned.
		if err := group.Add("http", lifecycle.HTTPServer(srv.http, srv.listener), lifecycle.LoopOption{Last: true}); err != nil {
			return sum, err
		}
		observer = sqsloop.Observers(observer, srv.page)
	}

	h := &hasher{slow: c.Slow, chunks: c.Chunks, checkpoints: c.State != nil}
	poison := &poisonLog{}
	middleware := []sqsloop.Middleware{poison.middleware}
	var idem *idempotency.Idempotency
	if c.State != nil {
		cp, err := checkpoint.New(c.State, checkpoint.Config{Queue: QueueName, Logger: log})
		if err != nil {
			return sum, err
		}
		if idem, err = idempotency.New(c.State, idempotency.Config{Queue: QueueName, Logger: log}); err != nil {
			return sum, err
		}
		middleware = append([]sqsloop.Middleware{idem.Middleware, cp.Middleware}, middleware...)
	}
	cons, err := consumer.New(q.mb, consumer.JSONHandler(h.handle), consumer.Config{
		Concurrency:       c.Concurrency,
		VisibilityTimeout: Lease,
		WaitTime:          time.Second,
		Visibility: visibility.Config{
			Interval:          Lease / 4,
			Extension:         Lease,
			CancelOnLeaseLost: true,
		},
		Backoff:         sqsloop.ExponentialBackoff(200*time.Millisecond, time.Second),
		ShutdownTimeout: 10 * time.Second,
		Middleware:      middleware,
		Logger:          log,
		Observer:        observer,
	})
	if err != nil {
		return sum, err
	}
	mon := &monitor{q: q, c: cons, every: c.Progress, out: out, began: began, log: log}
	if sum.Enqueued {
		mon.total = sum.Files + 3
	}
	if err := group.Add("consumer", cons); err != nil {
		return sum, err
	}
	if err := group.Add("monitor", mon); err != nil {
		return sum, err
	}
	sum.Ran = true
	err = group.Run(ctx)
	dead, derr := q.deadLettered(context.WithoutCancel(ctx))
	if derr != nil {
		log.Warn("worker: could not count the dead-letter queue", "error", derr)
	}
	sum.Stats, sum.Bytes, sum.Wall, sum.Drained = cons.Stats(), h.bytes.Load(), time.Since(began), mon.drained
	sum.DeadLettered, sum.PoisonCounts = dead-int(sum.Stats.Poisoned), poison.receiveCounts()
	if idem != nil {
		sum.Jobstate = true
		sum.Resumed, sum.ChunksSkipped, sum.Duplicates = h.resumed.Load(), h.skipped.Load(), idem.Stats().Duplicates
	}
	if q.exact { // what the drain must leave at 0
		a, err := q.mb.QueueAttributes(context.WithoutCancel(ctx))
		if err != nil {
			log.Warn("worker: could not count the messages in flight", "error", err)
		}
		sum.LeftInFlight = a.ApproximateMessagesInFlight
	}
	return sum, err
}

// monitor prints progress and ends the run once the queue is drained.
type monitor struct {
	q       *Queue
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
