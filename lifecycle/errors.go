package lifecycle

import "errors"

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
