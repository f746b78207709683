package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop/heartbeat"
)

// stopTimeout bounds an implementation's graceful stop after its last
// message: in-flight duplicates (slow scenario) may take a full handler run.
const stopTimeout = 30 * time.Second

// job is what an implementation is given for one run (of one worker, in
// a scenario of several workers on one queue).
type job struct {
	client *sqs.Client // counted; each worker has its own
	url    string
	sc     scenario
	tr     *tracker // shared by the workers
	log    *slog.Logger
	worker int // 0, 1, …: the worker this job is
}

// impl is one consumer implementation. consume handles messages from
// j.url until every preloaded message has been handled once (j.tr.done) or
// ctx is done, then stops gracefully (flushing acks) and returns. The
// returned note, if any, is shown in the per-run log.
type impl struct {
	name    string
	consume func(ctx context.Context, j job) (note string, err error)
}

func impls() []impl {
	return []impl{
		{name: "sqsloop", consume: consumeSQSLoop},
		{name: "naive", consume: consumeNaive},
		{name: "gocloud", consume: consumeGocloud(0)},
		{name: "gocloud-wait20", consume: consumeGocloud(20 * time.Second)},
	}
}

// handle is the handler every implementation runs: it records the
// handling (with the message's receipt handle and receive count), works
// for j.sc.work while beating every j.sc.beatEvery (heartbeat.Beat is a
// no-op outside sqsloop), and records the completion. It returns ctx's
// error if ctx ends the work early.
func (j job) handle(ctx context.Context, d delivery) error {
	i := j.tr.begin(j.worker, d)
	completed := false
	defer func() { j.tr.end(j.worker, i, completed) }()
	if j.sc.work > 0 {
		t := time.NewTimer(j.sc.beatEvery)
		defer t.Stop()
		for end := time.Now().Add(j.sc.work); time.Now().Before(end); {
			t.Reset(min(j.sc.beatEvery, time.Until(end)))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
			heartbeat.Beat(ctx)
		}
	}
	completed = true
	return nil
}

// awaitAll waits until every message was handled once or ctx is done; it
// returns an error saying how many were left in the latter case.
func (j job) awaitAll(ctx context.Context) error {
	select {
	case <-j.tr.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w with %d of %d messages handled", ctx.Err(), j.tr.completedCount(), len(j.tr.starts))
	}
}
