package lifecycle

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with [errors.Is].
var (
	// ErrAlreadyRunning is returned by a second call to [LoopGroup.Run],
	// concurrent or not, and by [LoopGroup.Add] once Run has been called: a
	// group runs once.
	ErrAlreadyRunning = errors.New("lifecycle: LoopGroup.Run already called")

	// ErrInvalidArgument is wrapped by the errors of [LoopGroup.Add] and by
	// the error [LoopGroup.Run] returns for a nil entry of Signals. Their
	// text reads "lifecycle: Field: want …, got …", naming the argument or
	// field and what it should be.
	ErrInvalidArgument = errors.New("lifecycle: invalid argument")
)

// invalidArgument is an error reading "lifecycle: Field: want …, got …"
// that wraps ErrInvalidArgument.
type invalidArgument struct{ field, want, got string }

func (e *invalidArgument) Error() string {
	return "lifecycle: " + e.field + ": want " + e.want + ", got " + e.got
}

func (e *invalidArgument) Unwrap() error { return ErrInvalidArgument }

// LoopError reports a loop that failed: its Run returned an error
// ([context.Canceled] counts only if the group had not asked the loop to
// stop), or its Shutdown returned an error; a panic in either counts, with
// its stack. [LoopGroup.Run] returns one LoopError per
// failing loop, joined with [errors.Join]; find them with [errors.As], and
// match the cause through them with [errors.Is], since LoopError implements
// Unwrap.
type LoopError struct {
	// Name is the name the loop was added with ([LoopGroup.Add]).
	Name string
	// Err is what went wrong; several causes of one loop are joined.
	Err error
}

// Error returns "lifecycle: loop NAME: ERR". It is safe on a nil
// *LoopError.
func (e *LoopError) Error() string {
	if e == nil {
		return "lifecycle: <nil LoopError>"
	}
	return fmt.Sprintf("lifecycle: loop %q: %v", e.Name, e.Err)
}

// Unwrap returns Err (nil for a nil *LoopError), so errors.Is and errors.As
// see through a LoopError.
func (e *LoopError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}
