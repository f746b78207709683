package lifecycle

import (
	"fmt"

	"github.com/sqsloop/sqsloop"
)

// errAlreadyRunning is what a second LoopGroup.Run, and Add once Run has
// been called, return: it wraps sqsloop.ErrAlreadyRunning.
var errAlreadyRunning = fmt.Errorf("lifecycle: LoopGroup.Run already called: %w", sqsloop.ErrAlreadyRunning)

// invalidArgument is an error reading "lifecycle: Field: want …, got …"
// that wraps sqsloop.ErrInvalidArgument.
type invalidArgument struct{ field, want, got string }

func (e *invalidArgument) Error() string {
	return "lifecycle: " + e.field + ": want " + e.want + ", got " + e.got
}

func (e *invalidArgument) Unwrap() error { return sqsloop.ErrInvalidArgument }
