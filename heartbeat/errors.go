package heartbeat

import "errors"

// Sentinel errors of the package. Errors returned by the package wrap them
// with %w, so callers match them with [errors.Is], never by string.
var (
	// ErrInvalidArgument means an argument or a configuration field is out
	// of its allowed range (for example a [WatchdogConfig] with Threshold
	// ≤ 0, or a nil io.Reader given to [NewReader]). The wrapping error
	// names the field and the allowed range.
	ErrInvalidArgument = errors.New("heartbeat: invalid argument")

	// ErrAlreadyRunning is returned by [Watchdog.Run] when another Run of
	// the same Watchdog has not returned yet: one Watchdog has one checking
	// goroutine.
	ErrAlreadyRunning = errors.New("heartbeat: watchdog already running")
)
