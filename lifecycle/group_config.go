package lifecycle

// GroupConfig configures a [LoopGroup]. The zero value is valid: no
// coordinator.
type GroupConfig struct {
	// Coordinator, if set, ties the group to process-wide shutdown: the
	// group begins shutdown when the coordinator does (first signal or
	// Trigger), and when the group begins shutdown for its own reasons (a
	// loop returned, Run's context ended) it triggers the coordinator, so
	// its callbacks run and other groups attached to it stop too.
	Coordinator *ShutdownCoordinator
}

// Validate reports every problem in c, each wrapping [ErrInvalidConfig] and
// naming the field and its allowed range; nil for a valid config.
func (c GroupConfig) Validate() error { return nil }
