package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/sqsmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

// sqsloopConfig is the consumer configuration of a scenario: its
// concurrency and lease timings, everything else the defaults (receives of
// up to 10 with a 20 s long poll, acks batched within 50 ms).
func sqsloopConfig(j job) consumer.Config {
	return consumer.Config{
		Concurrency:       j.sc.concurrency,
		VisibilityTimeout: j.sc.visibility,
		Visibility:        visibility.Config{Interval: j.sc.interval, Extension: j.sc.extension},
		ShutdownTimeout:   stopTimeout,
		Logger:            j.log,
	}
}

func consumeSQSLoop(ctx context.Context, j job) (string, error) {
	mb, err := sqsmailbox.New(j.client, j.url)
	if err != nil {
		return "", err
	}
	defer mb.Close()
	c, err := consumer.New(mb, func(ctx context.Context, m *sqsloop.Message) error {
		return j.handle(ctx, delivery{body: m.Body, receiptHandle: m.ReceiptHandle, receiveCount: m.ReceiveCount})
	}, sqsloopConfig(j))
	if err != nil {
		return "", err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(context.WithoutCancel(ctx)) }()
	waitErr := j.awaitAll(ctx)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	shutErr := c.Shutdown(stopCtx)
	err = errors.Join(waitErr, shutErr, <-runErr)
	st := c.Stats()
	note := fmt.Sprintf("receives=%d acked=%d ackFailed=%d extensions=%d in %d calls (largest %d) leasesLost=%d givenBack=%d",
		st.ReceiveCalls, st.Acked, st.AckFailed, st.Extensions, st.ExtensionCalls, st.LargestExtensionBatch, st.LeasesLost, st.GivenBack)
	return note, err
}
