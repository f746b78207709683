package visibility_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/visibility"
)

// A consumer's lease owner is tuned by its Config.Visibility, and checked
// by the consumer's Config.Validate, which names each field it finds
// wrong: here an Interval that leaves a lease of 30 s too little time
// between its first look and its deadline.
func ExampleConfig() {
	cfg := consumer.Config{
		VisibilityTimeout: 30 * time.Second,
		Visibility:        visibility.Config{Interval: 20 * time.Second, Extension: time.Minute},
	}
	err := cfg.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, sqsloop.ErrInvalidArgument))

	// Handlers that cannot beat: extend every lease, beats or not, for at
	// most an hour.
	cfg.Visibility = visibility.Config{FixedInterval: true, MaxExtension: time.Hour}
	fmt.Println(cfg.Validate())
	// Output:
	// Visibility.Interval: must be at most the visibility timeout/2 (15s), got 20s: sqsloop: invalid argument
	// true
	// <nil>
}
