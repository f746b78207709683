package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// DefaultShutdownTimeout (30 s) bounds the shutdown callbacks of a
// [ShutdownCoordinator] when CoordinatorConfig.CallbackTimeout is zero. It
// matches the default grace period Kubernetes gives a pod between SIGTERM
// and SIGKILL.
const DefaultShutdownTimeout = 30 * time.Second

// DefaultSignals returns the signals a [ShutdownCoordinator] handles when
// CoordinatorConfig.Signals is empty: SIGTERM (what Kubernetes, systemd and
// ECS send to stop a process) and SIGINT (Ctrl+C). It returns a new slice on
// each call.
func DefaultSignals() []os.Signal {
	return []os.Signal{syscall.SIGTERM, os.Interrupt}
}

// CoordinatorConfig configures a [ShutdownCoordinator]. The zero value is
// valid: every zero field means its default.
type CoordinatorConfig struct {
	// Signals that begin shutdown once [ShutdownCoordinator.Install] has
	// been called. Empty means [DefaultSignals] (SIGTERM, SIGINT). Entries
	// must not be nil.
	Signals []os.Signal

	// CallbackTimeout bounds the context passed to the shutdown callbacks
	// ([ShutdownCoordinator.Register]), as a time.Duration counted from the
	// moment shutdown begins. Zero means [DefaultShutdownTimeout] (30 s);
	// negative values are invalid.
	CallbackTimeout time.Duration

	// Exit is called with the exit code when a second signal arrives while
	// shutdown is under way. Nil means [os.Exit]. The code is 128 plus the
	// signal number for a [syscall.Signal] (130 for SIGINT, 143 for SIGTERM,
	// as shells report a process killed by that signal), else 1. Tests set it
	// to observe the exit without ending the process; if it returns, the
	// coordinator keeps watching, and calls it again on every further signal.
	Exit func(code int)
}

// Validate reports every problem in c, joined with [errors.Join]; each
// wraps [ErrInvalidConfig] and names the field and its allowed range. It
// returns nil for a valid config.
func (c CoordinatorConfig) Validate() error {
	var errs []error
	for i, s := range c.Signals {
		if s == nil {
			errs = append(errs, fmt.Errorf("%w: CoordinatorConfig.Signals[%d] is nil; want a signal such as syscall.SIGTERM", ErrInvalidConfig, i))
		}
	}
	if c.CallbackTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: CoordinatorConfig.CallbackTimeout is %v; want ≥ 0 (0 means DefaultShutdownTimeout, %v)", ErrInvalidConfig, c.CallbackTimeout, DefaultShutdownTimeout))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field replaced by its default.
func (c CoordinatorConfig) withDefaults() CoordinatorConfig {
	if len(c.Signals) == 0 {
		c.Signals = DefaultSignals()
	} else {
		c.Signals = append([]os.Signal(nil), c.Signals...)
	}
	if c.CallbackTimeout == 0 {
		c.CallbackTimeout = DefaultShutdownTimeout
	}
	if c.Exit == nil {
		c.Exit = os.Exit
	}
	return c
}
