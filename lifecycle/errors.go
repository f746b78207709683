package lifecycle

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with [errors.Is].
var (
	// ErrShutdown is the cause (see [context.Cause]) of the context returned by
	// [ShutdownCoordinator.Context] once shutdown has begun. A shutdown begun
	// by a signal wraps it with the signal's name; one begun by a LoopGroup
	// wraps it with the reason (a loop returned, the group's context ended).
	ErrShutdown = errors.New("lifecycle: shutdown requested")

	// ErrAlreadyRunning is returned by a second call to [LoopGroup.Run],
	// concurrent or not, and by [LoopGroup.Add] once Run has been called: a
	// group runs once.
	ErrAlreadyRunning = errors.New("lifecycle: loop group already running")

	// ErrAlreadyInstalled is returned by a second call to
	// [ShutdownCoordinator.Install]; the first installation stays in effect.
	ErrAlreadyInstalled = errors.New("lifecycle: signal handling already installed")

	// ErrCoordinatorStopped is returned by [ShutdownCoordinator.Install] after
	// [ShutdownCoordinator.Stop].
	ErrCoordinatorStopped = errors.New("lifecycle: shutdown coordinator stopped")

	// ErrInvalidConfig is wrapped by every error of [CoordinatorConfig.Validate],
	// [GroupConfig.Validate] and [LoopGroup.Add]; the wrapping message names
	// the field and the allowed range.
	ErrInvalidConfig = errors.New("lifecycle: invalid configuration")
)

// LoopError reports a loop that failed: its Run returned an error (other than
// [context.Canceled] after the group asked it to stop), or its Shutdown
// returned an error.
// [LoopGroup.Run] returns one LoopError per failing loop, joined with
// [errors.Join]; find them with [errors.As], and match the cause through
// them with [errors.Is], since LoopError implements Unwrap.
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
