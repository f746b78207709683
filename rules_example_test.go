package sqsloop_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// A request out of SQS's ranges fails before it reaches a queue, with every
// problem named; errors.Is finds the sentinel.
func ExampleReceiveRequest_Validate() {
	err := sqsloop.ReceiveRequest{MaxMessages: 11, WaitTime: 30 * time.Second}.Validate()
	fmt.Println(errors.Is(err, sqsloop.ErrInvalidArgument))
	fmt.Println(err)
	// Output:
	// true
	// sqsloop: invalid argument: ReceiveRequest.MaxMessages: must be between 1 and 10 (SQS MaxNumberOfMessages), got 11
	// sqsloop: invalid argument: ReceiveRequest.WaitTime: must be between 0 and 20s (SQS WaitTimeSeconds 0–20), got 30s
}

// An invalid entry of a batch fails alone; the others are sent.
func ExampleValidateSend() {
	entries, err := sqsloop.ValidateSend([]sqsloop.OutgoingMessage{
		{Body: "ok"},
		{Body: "late", Delay: 20 * time.Minute},
	})
	fmt.Println(err)
	fmt.Println(entries[0])
	fmt.Println(entries[1])
	// Output:
	// <nil>
	// <nil>
	// sqsloop: invalid argument: Send: msgs[1].Delay: must be between 0 and 15m (SQS DelaySeconds 0–900), got 20m0s
}

// SQS counts whole seconds; every Mailbox rounds a duration up.
func ExampleWholeSeconds() {
	for _, d := range []time.Duration{time.Nanosecond, time.Second, 1200 * time.Millisecond} {
		fmt.Println(d, "->", sqsloop.WholeSeconds(d))
	}
	// Output:
	// 1ns -> 1s
	// 1s -> 1s
	// 1.2s -> 2s
}
