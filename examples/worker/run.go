package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// options are the worker's flags.
type options struct {
	dir         string
	slow        time.Duration
	chunks      int
	concurrency int
	progress    time.Duration
}

// Queue settings of the demo: short leases so extensions show, and a
// redrive policy so the failing job reaches the dead-letter queue.
const (
	queueName       = "jobs"
	dlqName         = "jobs-dlq"
	maxReceiveCount = 3
	lease           = 2 * time.Second
)

// run enqueues the jobs, consumes them until the queue is drained (or coord
// begins shutdown), and returns the summary.
func run(ctx context.Context, o options, coord *lifecycle.ShutdownCoordinator, out io.Writer, log *slog.Logger) (summary, error) {
	began := time.Now()
	sum := summary{}
	broker := memmailbox.NewBroker()
	defer broker.Close()
	dlq, err := broker.CreateQueue(dlqName, memmailbox.QueueConfig{})
	if err != nil {
		return sum, err
	}
	q, err := broker.CreateQueue(queueName, memmailbox.QueueConfig{
		VisibilityTimeout: lease, MaxReceiveCount: maxReceiveCount, DeadLetterQueue: dlqName,
	})
	if err != nil {
		return sum, err
	}
	files, err := listFiles(o.dir)
	if err != nil {
		return sum, err
	}
	if err := enqueue(ctx, q, files); err != nil {
		return sum, err
	}
	sum.files = len(files)

	h := &hasher{slow: o.slow, chunks: o.chunks}
	c, err := consumer.New(q, h.handle, consumer.Config{
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
		Logger:          log,
	})
	if err != nil {
		return sum, err
	}
	group, err := lifecycle.NewLoopGroup(lifecycle.GroupConfig{Coordinator: coord, ShutdownTimeout: 15 * time.Second})
	if err != nil {
		return sum, err
	}
	mon := &monitor{q: q, dlq: dlq, c: c, every: o.progress, out: out, began: began, total: len(files) + 2}
	if err := group.Add("consumer", c); err != nil {
		return sum, err
	}
	if err := group.Add("monitor", mon); err != nil {
		return sum, err
	}
	err = group.Run(ctx)
	sum.fill(c.Stats(), dlq.Stats().Visible, h.bytes.Load(), time.Since(began), mon.drained)
	sum.leftInFlight = q.Stats().InFlight
	return sum, err
}

// monitor prints progress and ends the run once the queue is drained.
type monitor struct {
	q, dlq  *memmailbox.Queue
	c       *consumer.Consumer
	every   time.Duration
	out     io.Writer
	began   time.Time
	total   int
	drained bool
}

// Run polls the queue every 100 ms; it returns nil when the queue holds
// nothing visible, delayed or in flight (the group then shuts the consumer
// down), or when ctx is done.
func (m *monitor) Run(ctx context.Context) error {
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	next := time.Now().Add(m.every)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
		}
		if m.every > 0 && !time.Now().Before(next) {
			m.print()
			next = next.Add(m.every)
		}
		if st := m.q.Stats(); st.Visible+st.InFlight+st.Delayed == 0 {
			m.drained = true
			return nil
		}
	}
}

func (m *monitor) print() {
	st := m.c.Stats()
	fmt.Fprintf(m.out, "[%5.1fs] acked %d/%d  failed %d  extensions %d in %d calls  leases lost %d  redelivered %d  dead-lettered %d\n",
		time.Since(m.began).Seconds(), st.Acked, m.total, st.Failed, st.Extensions, st.ExtensionCalls,
		st.LeasesLost, st.Redelivered, m.dlq.Stats().Visible)
}
