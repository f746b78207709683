package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// consumeNaive is the loop people write by hand: receive up to 10 with a
// long poll (asking for ApproximateReceiveCount, which the handler records),
// start a goroutine per message (at most concurrency at once),
// each with its own ticker extending its message's visibility
// (ChangeMessageVisibility) every interval while the handler runs, and one
// DeleteMessage per message.
func consumeNaive(ctx context.Context, j job) (string, error) {
	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	work := context.WithoutCancel(ctx) // handlers and acks finish after receiving stops
	sem := make(chan struct{}, j.sc.concurrency)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []error
	fail := func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
	}

	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		for recvCtx.Err() == nil {
			out, err := j.client.ReceiveMessage(recvCtx, &sqs.ReceiveMessageInput{
				QueueUrl:            aws.String(j.url),
				MaxNumberOfMessages: 10,
				WaitTimeSeconds:     20,
				VisibilityTimeout:   int32(j.sc.visibility / time.Second),
				// The one system attribute the handler reads.
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
			})
			if err != nil {
				if recvCtx.Err() == nil {
					fail(err)
					time.Sleep(100 * time.Millisecond)
				}
				continue
			}
			for _, m := range out.Messages {
				sem <- struct{}{} // wait for a free slot, holding the rest of the batch
				wg.Go(func() {
					defer func() { <-sem }()
					if err := naiveProcess(work, j, m); err != nil {
						fail(err)
					}
				})
			}
		}
	}()

	waitErr := j.awaitAll(ctx)
	stopRecv()
	<-recvDone
	wg.Wait()
	return "", errors.Join(append([]error{waitErr}, errs...)...)
}

// naiveProcess runs the handler in a goroutine and, until it returns,
// extends the message's visibility on its own ticker; then deletes it.
func naiveProcess(ctx context.Context, j job, m types.Message) error {
	done := make(chan error, 1)
	d := delivery{body: aws.ToString(m.Body), receiptHandle: aws.ToString(m.ReceiptHandle), receiveCount: receiveCountOf(m.Attributes)}
	go func() { done <- j.handle(ctx, d) }()
	ticker := time.NewTicker(j.sc.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			// A failed extension is ignored, as such loops usually do.
			_, _ = j.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
				QueueUrl:          aws.String(j.url),
				ReceiptHandle:     m.ReceiptHandle,
				VisibilityTimeout: int32(j.sc.extension / time.Second),
			})
		case err := <-done:
			if err != nil {
				return err
			}
			_, err = j.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(j.url), ReceiptHandle: m.ReceiptHandle})
			return err
		}
	}
}
