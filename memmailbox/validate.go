package memmailbox

import (
	"fmt"

	"github.com/sqsloop/sqsloop"
)

// validateBatch checks the number of entries of a batch call.
func validateBatch(op string, n int) error {
	if n < 1 || n > sqsloop.MaxBatchSize {
		return fmt.Errorf("memmailbox: %s: %d entries, want 1–%d (SQS caps a batch at 10 entries): %w",
			op, n, sqsloop.MaxBatchSize, sqsloop.ErrInvalidArgument)
	}
	return nil
}

// validateReceive checks a ReceiveRequest against SQS's ranges.
func validateReceive(req sqsloop.ReceiveRequest) error {
	switch {
	case req.MaxMessages < 1 || req.MaxMessages > sqsloop.MaxBatchSize:
		return fmt.Errorf("memmailbox: Receive: ReceiveRequest.MaxMessages %d out of range 1–%d (SQS MaxNumberOfMessages): %w",
			req.MaxMessages, sqsloop.MaxBatchSize, sqsloop.ErrInvalidArgument)
	case req.VisibilityTimeout < 0 || req.VisibilityTimeout > sqsloop.MaxVisibilityTimeout:
		return fmt.Errorf("memmailbox: Receive: ReceiveRequest.VisibilityTimeout %v out of range 0–12h: %w",
			req.VisibilityTimeout, sqsloop.ErrInvalidArgument)
	case req.WaitTime < 0 || req.WaitTime > sqsloop.MaxWaitTime:
		return fmt.Errorf("memmailbox: Receive: ReceiveRequest.WaitTime %v out of range 0–20s (SQS WaitTimeSeconds): %w",
			req.WaitTime, sqsloop.ErrInvalidArgument)
	}
	return nil
}
