package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"gocloud.dev/pubsub/awssnssqs"
)

// consumeGocloud is gocloud.dev/pubsub over its awssnssqs driver, used the
// documented way: Receive in a loop, handle each message in a goroutine
// (at most concurrency at once, by a semaphore), Ack. The driver's
// batching and prefetching are left at their defaults; Raw is set (the
// messages were sent straight to SQS) and WaitTime is 20 s, the long poll
// the other two use. gocloud does not extend visibility timeouts.
func consumeGocloud(ctx context.Context, j job) (string, error) {
	subCtx := context.WithoutCancel(ctx)
	sub := awssnssqs.OpenSubscriptionV2(subCtx, j.client, j.url, &awssnssqs.SubscriptionOptions{Raw: true, WaitTime: 20 * time.Second})
	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	work := context.WithoutCancel(ctx)
	sem := make(chan struct{}, j.sc.concurrency)
	var wg sync.WaitGroup
	var recvErr error

	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		for {
			select {
			case sem <- struct{}{}:
			case <-recvCtx.Done():
				return
			}
			msg, err := sub.Receive(recvCtx)
			if err != nil {
				<-sem
				if recvCtx.Err() == nil {
					recvErr = err
				}
				return
			}
			wg.Go(func() {
				defer func() { <-sem }()
				if j.handle(work, string(msg.Body)) == nil {
					msg.Ack()
				} else if msg.Nackable() {
					msg.Nack()
				}
			})
		}
	}()

	waitErr := j.awaitAll(ctx)
	stopRecv()
	<-recvDone
	wg.Wait()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	return "", errors.Join(waitErr, recvErr, sub.Shutdown(stopCtx))
}
