package sqsmailbox

import (
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// seconds rounds d up to whole seconds, the unit SQS counts in: 1.2 s is
// sent as 2, so a message is never hidden, delayed or waited on for less than
// asked. d must already be checked to be in 0..max with checkDuration.
func seconds(d time.Duration) int32 {
	s := d / time.Second
	if d%time.Second != 0 {
		s++
	}
	return int32(s)
}

// checkDuration returns an error wrapping sqsloop.ErrInvalidArgument, naming
// field and the range, when d lies outside 0..max.
func checkDuration(field string, d, max time.Duration) error {
	if d < 0 || d > max {
		return fmt.Errorf("sqsmailbox: %s = %v: want 0 to %v: %w", field, d, max, sqsloop.ErrInvalidArgument)
	}
	return nil
}

// checkBatch returns an error wrapping sqsloop.ErrInvalidArgument unless n is
// 1..sqsloop.MaxBatchSize (SQS caps every batch at 10 entries).
func checkBatch(field string, n int) error {
	if n < 1 || n > sqsloop.MaxBatchSize {
		return fmt.Errorf("sqsmailbox: %s has %d entries: want 1 to %d: %w", field, n, sqsloop.MaxBatchSize, sqsloop.ErrInvalidArgument)
	}
	return nil
}
