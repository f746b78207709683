package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"gocloud.dev/pubsub/awssnssqs"
)

// consumeGocloud returns gocloud.dev/pubsub over its awssnssqs driver with
// the given wait time, used the documented way: Receive in a loop, handle
// each message in a goroutine (at most concurrency at once, by a
// semaphore), Ack. The semaphore is taken before Receive, not after as in
// gocloud's example, so the loop never holds a received message while it
// waits for a slot (which would only add to gocloud's buffer waits in
// two-workers). Raw is set (the messages were sent straight to SQS);
// everything else is the driver's default (batching, prefetching, eager
// Nack). waitTime 0 is the driver's default: it sends no WaitTimeSeconds,
// so a receive is a short poll on our queues (whose
// ReceiveMessageWaitTimeSeconds is 0), and the driver sleeps 250 ms after
// an empty one. gocloud does not extend visibility timeouts.
func consumeGocloud(waitTime time.Duration) func(ctx context.Context, j job) (string, error) {
	return func(ctx context.Context, j job) (string, error) {
		return gocloudConsume(ctx, j, &awssnssqs.SubscriptionOptions{Raw: true, WaitTime: waitTime})
	}
}

func gocloudConsume(ctx context.Context, j job, opts *awssnssqs.SubscriptionOptions) (string, error) {
	subCtx := context.WithoutCancel(ctx)
	sub := awssnssqs.OpenSubscriptionV2(subCtx, j.client, j.url, opts)
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
				// The driver's message (the raw SQS one, with the system
				// attributes it asks for: All) gives the receipt handle and
				// the receive count.
				var raw sqstypes.Message
				msg.As(&raw)
				d := delivery{body: string(msg.Body), receiptHandle: aws.ToString(raw.ReceiptHandle), receiveCount: receiveCountOf(raw.Attributes)}
				if j.handle(work, d) == nil {
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
