package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// report is what a consumer process did, written as JSON on its standard
// output when it exits.
type report struct {
	Received, Succeeded, Failed, Acked, AckFailed, LeasesLost int64
	// Deadlocks counts the calls that failed with 40P01, by Mailbox method
	// (and "Sweep").
	Deadlocks map[string]int
}

func (r *report) add(o report) {
	r.Received += o.Received
	r.Succeeded += o.Succeeded
	r.Failed += o.Failed
	r.Acked += o.Acked
	r.AckFailed += o.AckFailed
	r.LeasesLost += o.LeasesLost
	for k, v := range o.Deadlocks {
		if r.Deadlocks == nil {
			r.Deadlocks = map[string]int{}
		}
		r.Deadlocks[k] += v
	}
}

func (r *report) deadlocks() int {
	n := 0
	for _, v := range r.Deadlocks {
		n += v
	}
	return n
}

// child is a consumer process: a consumer of o.handlers handlers and a
// Sweeper on the queue of the database dsn, until SIGTERM; it then drains
// and writes its report.
func child(dsn string, o options) int {
	ctx, stop := signalled()
	defer stop()
	st, err := postgres.Open(context.Background(), dsn, postgres.Options{MaxConns: int32(o.handlers/2 + 4)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgfleet: child:", err)
		return 1
	}
	defer st.Close()
	mb, err := st.Queue(context.Background(), queueName(o.fifo))
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgfleet: child:", err)
		return 1
	}
	cm := &counted{Mailbox: mb}
	c, err := consumer.New(cm, func(ctx context.Context, m *sqsloop.Message) error {
		t := time.NewTimer(o.work)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if failing(m.Body, o.fail) {
			return errors.New("a job that always fails")
		}
		return nil
	}, consumer.Config{
		Concurrency:       o.handlers,
		VisibilityTimeout: o.visibility,
		WaitTime:          time.Second,
		// A failing job is back 100 ms later, so that it reaches
		// maxReceiveCount, and the DLQ, within the run.
		Backoff: func(int) time.Duration { return 100 * time.Millisecond },
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgfleet: child:", err)
		return 1
	}
	var wg sync.WaitGroup
	sw := st.Sweeper(o.sweep, func(_ sqlmailbox.SweepStats, err error) { cm.note("Sweep", err) })
	wg.Go(func() { _ = sw.Run(ctx) })
	runErr := c.Run(ctx)
	wg.Wait()
	s := c.Stats()
	cm.mu.Lock()
	r := report{Received: s.Received, Succeeded: s.Succeeded, Failed: s.Failed, Acked: s.Acked, AckFailed: s.AckFailed,
		LeasesLost: s.LeasesLost, Deadlocks: cm.n}
	cm.mu.Unlock()
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return 1
	}
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "pgfleet: child: the consumer:", runErr)
		return 1
	}
	return 0
}

// failing reports whether the job of body is one of the fraction that
// always fail: the same jobs at every delivery.
func failing(body string, fraction float64) bool {
	h := fnv.New32a()
	_, _ = h.Write([]byte(body))
	return float64(h.Sum32()%10000) < fraction*10000
}

// counted is a Mailbox that counts the calls failing with 40P01.
type counted struct {
	sqsloop.Mailbox
	counter
}

func (m *counted) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	msgs, err := m.Mailbox.Receive(ctx, req)
	m.note("Receive", err)
	return msgs, err
}

func (m *counted) Delete(ctx context.Context, handles []string) ([]error, error) {
	errs, err := m.Mailbox.Delete(ctx, handles)
	m.note("Delete", err)
	return errs, err
}

func (m *counted) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	errs, err := m.Mailbox.ChangeVisibility(ctx, changes)
	m.note("ChangeVisibility", err)
	return errs, err
}
