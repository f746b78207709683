package lifecycle

import (
	"fmt"
	"time"
)

// GroupConfig configures a [LoopGroup]. The zero value is valid: default
// ShutdownTimeout, no coordinator.
type GroupConfig struct {
	// ShutdownTimeout is how long, as a time.Duration counted from the
	// moment the group begins shutdown, a loop implementing [Shutdowner] may
	// drain before the group cancels its Run context; it is also the
	// deadline of the context passed to Shutdown. Zero means
	// [DefaultShutdownTimeout] (30 s); negative values are invalid. Loops
	// that do not implement Shutdowner have their Run context cancelled at
	// once and drain on their own terms.
	ShutdownTimeout time.Duration

	// Coordinator, if set, ties the group to process-wide shutdown: the
	// group begins shutdown when the coordinator does (first signal or
	// Trigger), and when the group begins shutdown for its own reasons (a
	// loop returned, Run's context ended) it triggers the coordinator, so
	// its callbacks run and other groups attached to it stop too.
	Coordinator *ShutdownCoordinator
}

// Validate reports every problem in c, each wrapping [ErrInvalidConfig] and
// naming the field and its allowed range; nil for a valid config.
func (c GroupConfig) Validate() error {
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("%w: GroupConfig.ShutdownTimeout is %v; want ≥ 0 (0 means DefaultShutdownTimeout, %v)", ErrInvalidConfig, c.ShutdownTimeout, DefaultShutdownTimeout)
	}
	return nil
}
